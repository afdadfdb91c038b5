"""research.accuracy.calibrate_all with the fake judge: one JSON per file, one Markdown table, per-file row limits."""
from __future__ import annotations

import json

from cli_helpers import write_jsonl
from research.accuracy import calibrate_all


def faith_row(i: int, answer: str, value: int) -> dict:
    """A faithfulness-labelled row (id f<i>) of an answer about the Eiffel Tower."""
    return {"id": f"f{i}", "question": "Where is the Eiffel Tower?", "contexts": ["The Eiffel Tower is in Paris."],
            "answer": answer, "label": {"metric": "faithfulness", "value": value, "kind": "binary"}}


def test_each_file_gets_its_json_and_limit_for_overrides_limit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    answers = ["The Eiffel Tower is in Paris.", "The Eiffel Tower is in Rome, built in 1920."]
    for name in ("faithfulness_a.jsonl", "faithfulness_b.jsonl"):
        write_jsonl(bench / name, [faith_row(i, answers[i % 2], 1 - i % 2) for i in range(6)])
    out = tmp_path / "out"
    code = calibrate_all.main(["--judge", "fake", "--embedder", "fake", "--benchmarks", str(bench), "--limit", "4",
                           "--limit-for", "_b=2", "--out-dir", str(out), "--no-progress"])
    assert code == 0
    a, b = (json.loads((out / f"faithfulness_{x}.json").read_text())["results"][0] for x in "ab")
    assert (a["rows"], b["rows"]) == (4, 2)
    table = (out / "accuracy.md").read_text()
    assert "faithfulness\\_a.jsonl | faithfulness | binary | 4 |" in table
    assert "faithfulness\\_b.jsonl | faithfulness | binary | 2 |" in table
    assert "rows of each file" not in table and "s/sample" in table


def test_a_malformed_limit_for_is_refused(tmp_path):
    import pytest

    with pytest.raises(SystemExit, match="NAME=N"):
        calibrate_all.main(["--judge", "fake", "--benchmarks", str(tmp_path), "--limit-for", "x=0",
                        "--out-dir", str(tmp_path / "o")])


def test_metric_option_reaches_every_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    write_jsonl(bench / "faithfulness_a.jsonl", [faith_row(i, "The Eiffel Tower is in Paris.", 1) for i in range(2)])
    out = tmp_path / "out"
    code = calibrate_all.main(["--judge", "fake", "--benchmarks", str(bench), "--metric-option",
                           "faithfulness.verdicts=json", "--out-dir", str(out), "--no-progress"])
    assert code == 0
    [c] = json.loads((out / "faithfulness_a.json").read_text())["results"]
    assert c["metric_options"]["verdicts"] == "json"  # beside the other options' defaults


def test_a_malformed_metric_option_is_refused(tmp_path):
    import pytest

    with pytest.raises(SystemExit, match="METRIC.KEY=VALUE"):
        calibrate_all.main(["--judge", "fake", "--benchmarks", str(tmp_path), "--metric-option", "verdicts=json",
                        "--out-dir", str(tmp_path / "o")])
