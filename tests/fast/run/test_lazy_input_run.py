"""A run over a large JSON Lines input read back from its file (data/lazy_samples.py, forced with a small
SPILL_AFTER): the same report (every score, the summary, the gate), shards and --limit as over the in-memory list;
the samples to score are read as the engine takes them (run/engine_base.py Todo), a bounded number ahead."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localragas import evaluate
from localragas.data import lazy_samples
from localragas.data.dataset import load_samples
from localragas.run import local_engine
from localragas.run.checkpoint import sample_hash
from localragas.run.engine_base import Todo

from cli_helpers import code_and_output as run

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


def comparable(report: dict) -> dict:
    samples = [{"id": s["id"], "category": s["category"], "metrics": s["metrics"]} for s in report["samples"]]
    return {"summary": report["summary"], "by_category": report["by_category"], "gate": report["gate"],
            "samples": samples, "skipped": report["skipped"], "languages": report["meta"]["languages"],
            "judge_check": report["meta"]["judge_check"]["status"], "shard": report["meta"].get("shard")}


def test_a_lazy_input_gives_the_same_report_as_the_in_memory_one(monkeypatch):
    in_memory = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False)
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)
    read_back: list[int] = []
    real_read = lazy_samples.RowIndex.read
    monkeypatch.setattr(lazy_samples.RowIndex, "read", lambda self, row: read_back.append(row) or real_read(self, row))
    for concurrency in (1, 3):
        held = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False, concurrency=concurrency)
        assert [(s.id, s.metrics) for s in held.samples] == [(s.id, s.metrics) for s in in_memory.samples]
        assert held.summary == in_memory.summary and held.gate == in_memory.gate
        assert held.by_category == in_memory.by_category
        assert held.meta["languages"] == in_memory.meta["languages"]
        assert held.meta["judge_check"]["status"] == in_memory.meta["judge_check"]["status"]
    assert set(read_back) == set(range(16))  # the samples were read from the file, not held


def test_a_language_override_applies_to_each_sample_read_back(monkeypatch):
    in_memory = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False, language="en")
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)
    held = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False, language="en")
    assert held.summary == in_memory.summary and held.meta["languages"] == in_memory.meta["languages"]


@pytest.mark.parametrize("flags", [["--limit", "7"], ["--shard", "2/3"], ["--shard", "1/2", "--limit", "9"]])
def test_shards_and_limit_of_a_lazy_input_equal_the_in_memory_ones(flags, monkeypatch, tmp_path):
    memory, held = tmp_path / "memory.json", tmp_path / "held.json"
    code_memory, out = run("eval", EXAMPLE, *FAST, *flags, "--out", memory)
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)
    code_held, out_held = run("eval", EXAMPLE, *FAST, *flags, "--out", held)
    assert code_held == code_memory, out_held
    a, b = json.loads(memory.read_text()), json.loads(held.read_text())
    assert comparable(b) == comparable(a)
    expected = 7 if flags == ["--limit", "7"] else len(a["meta"]["shard"]["positions"])
    assert len(b["samples"]) == expected > 0


def test_the_local_engines_threads_are_handed_a_bounded_number_of_samples(monkeypatch):
    samples, _ = load_samples(EXAMPLE)
    todo = Todo(samples)
    for i in range(16):
        todo.add(i)
    read = []
    real_entry = Todo._entry
    monkeypatch.setattr(Todo, "_entry", lambda self, i: read.append(i) or real_entry(self, i))
    monkeypatch.setattr(local_engine, "IN_FLIGHT_PER_WORKER", 2)
    finished: dict[int, tuple[str, str]] = {}
    reads_at_finish: list[int] = []

    def finish(entry, result):
        finished[entry.position] = (entry.digest, result)
        reads_at_finish.append(len(read))

    local_engine._score_in_threads(todo, 2, finish, lambda sample: sample.id)
    assert sorted(finished) == list(range(16)) and finished[4] == (sample_hash(samples[4]), samples[4].id)
    assert all(count <= k + 4 for k, count in enumerate(reads_at_finish))  # at most 2 x 2 in flight
