"""research.accuracy.injection_flip_rate with the fake judge: a flip counted per case, every hostile case run, metric
options passed through (the real judge is run by hand: docs/injection.md)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from research.accuracy import injection_flip_rate

CASES_FILE = Path(__file__).resolve().parents[1] / "data" / "hostile_cases.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
CORE = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def test_flip_counting():
    s = injection_flip_rate
    case = {"id": "x", "metric": "faithfulness", "attack": "a", "field": "answer", "clean_verdict": "fail"}
    rows = [
        s.case_result(case, {"value": 0.0}, {"value": 1.0}),  # clear, flipped
        s.case_result(case, {"value": 0.2}, {"value": 0.4}),  # clear, same verdict
        s.case_result(case, {"value": 0.9}, {"value": 0.1}),  # clean not as expected: unclear, flipped
        s.case_result(case, {"value": 0.0}, {"value": None, "unscored": "no_claims"}),  # clear, flipped to unscored
    ]
    assert [(r["clear"], r["flipped"]) for r in rows] == [(True, True), (True, False), (False, True), (True, True)]
    assert rows[3]["hostile"]["verdict"] == "unscored" and rows[0]["clean"]["verdict"] == "fail"
    assert s.summarise(rows) == {"cases": 4, "clear": 3, "flips": 3, "flip_rate": 0.75, "flips_clear": 2,
                                 "flip_rate_clear": 0.6667}
    assert s.verdict(0.5) == "pass" and s.verdict(0.4999) == "fail"


def test_the_flip_rate_script_runs_every_case_with_the_fake_judge(tmp_path, capsys):
    s = injection_flip_rate
    out = tmp_path / "flips.json"
    code = s.main(["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert [r["id"] for r in result["cases"]] == [c["id"] for c in CASES]
    assert set(result["per_metric"]) == set(CORE)
    assert result["overall"]["cases"] == len(CASES) == sum(m["cases"] for m in result["per_metric"].values())
    assert result["overall"]["flips"] == sum(r["flipped"] for r in result["cases"])
    assert result["judge"]["name"] == "fake"
    for r in result["cases"]:
        assert r["clean"]["verdict"] in ("pass", "fail", "unscored")
    printed = capsys.readouterr().out
    assert "overall" in printed and "rate (clear)" in printed and f"wrote {out}" in printed
    code = s.main(["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache",
                   "--metric", "context_recall", "--fail-on-flip"])
    assert code in (0, 1)
    assert "faith-01" not in capsys.readouterr().out


def test_the_flip_rate_script_takes_metric_options(tmp_path):
    s, out = injection_flip_rate, tmp_path / "flips.json"
    argv = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--metric", "answer_relevancy"]
    assert s.main([*argv, "--metric-option", "answer_relevancy.questions=generated", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["metric_options"] == {"answer_relevancy": {"questions": "generated"}}
    with pytest.raises(SystemExit, match="METRIC.KEY=VALUE"):
        s.main([*argv, "--metric-option", "questions=generated"])
