"""A large JSON Lines input held by its rows' offsets (data/lazy_samples.py): each sample read back from the file when
used is the sample the in-memory list holds; a bad row is still named by its line, ids are checked and named as
before; a file changed after it was loaded is refused. The lazy path is forced with a small SPILL_AFTER; the runs
over such an input: tests/fast/run/test_lazy_input_run.py."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from localragas.core.errors import DatasetError
from localragas.data import lazy_samples
from localragas.data.dataset import load_samples
from localragas.data.field_check import SampleList
from localragas.data.lazy_samples import LazySamples

from cli_helpers import sample_rows, write_jsonl

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"


@pytest.fixture
def lazy(monkeypatch):
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)


def test_a_large_jsonl_input_is_read_back_as_the_same_samples(monkeypatch):
    in_memory, _ = load_samples(EXAMPLE)
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)
    held, _ = load_samples(EXAMPLE)
    assert isinstance(in_memory, SampleList) and isinstance(held, LazySamples)
    assert len(held) == 16 and list(held) == list(in_memory)
    assert held[5] == in_memory[5] and held[-1] == in_memory[-1]
    assert list(held[:4]) == in_memory[:4] and held[:4].source == str(EXAMPLE)
    part = held.at([1, 3, 15])
    assert list(part) == [in_memory[1], in_memory[3], in_memory[15]] and part.whole is held
    assert held.ignored == in_memory.ignored and held.source == in_memory.source
    assert {s.language for s in held.with_language("zh")} == {"zh"}


def test_a_bad_row_past_the_threshold_is_named_by_its_line(lazy, tmp_path):
    rows = sample_rows(6)
    rows.insert(5, {"id": "bad", "question": "Where?", "contexts": "not a list", "answer": "x"})
    rows.insert(6, "{not json")
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(DatasetError, match=r"d\.jsonl, line 6, field 'contexts': expected a list"):
        load_samples(data)
    held, skipped = load_samples(data, skip_invalid=True)
    assert isinstance(held, LazySamples) and [s.id for s in held] == [f"s{i}" for i in range(6)]
    assert [(row.line, row.field) for row in skipped] == [(6, "contexts"), (7, None)]
    assert "invalid JSON" in skipped[1].reason


def test_ids_of_a_lazy_input_are_checked_and_named_as_in_memory(lazy, tmp_path):
    rows = [{k: v for k, v in r.items() if k != "id"} for r in sample_rows(5)] * 2  # each question twice, no ids
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    held, _ = load_samples(data)
    ids = [s.id for s in held]
    assert isinstance(held, LazySamples) and len(set(ids)) == 10 and ids[5] == ids[0] + "-2"
    assert ids[9] == held[9].id == ids[4] + "-2"
    duplicated = write_jsonl(tmp_path / "dup.jsonl", sample_rows(5) + [sample_rows(3)[2]])
    with pytest.raises(DatasetError, match=r"line 6, field 'id': duplicate id 's2' \(first used on line 3\)"):
        load_samples(duplicated)


def test_a_data_file_changed_during_the_run_is_refused_naming_it(lazy, tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", sample_rows(6))
    held, _ = load_samples(data)
    assert held[2].id == "s2"
    with data.open("a", encoding="utf-8") as f:
        f.write(json.dumps(sample_rows(7)[6]) + "\n")
    with pytest.raises(DatasetError, match=r"d\.jsonl: the file changed while the run was reading it"):
        held[3]
    data.write_text(data.read_text(encoding="utf-8").replace("red", "tan"), encoding="utf-8")  # the same size
    later = os.stat(data).st_mtime_ns + 5_000_000_000
    os.utime(data, ns=(later, later))
    with pytest.raises(DatasetError, match="the file changed"):
        list(held)


def test_small_inputs_and_other_formats_stay_in_a_list(lazy, tmp_path):
    assert isinstance(load_samples(write_jsonl(tmp_path / "small.jsonl", sample_rows(3)))[0], SampleList)
    as_json = tmp_path / "d.json"
    as_json.write_text(json.dumps(sample_rows(6)), encoding="utf-8")
    assert isinstance(load_samples(as_json)[0], SampleList)
