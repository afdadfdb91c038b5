"""Noise sensitivity is lower-is-better: the gate passes at or under its threshold, and every report says so."""
from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from localragas.report.evidence import worst_samples
from localragas.run.gate import run_gate
from localragas.report.html_report import render_html
from localragas.report.junit import render_junit
from localragas.report.markdown import render_markdown
from localragas.report.terminal import print_report
from localragas.data.schema import MetricSummary
from localragas.testing import gate_failure_message

from cli_helpers import cli
from reports_helpers import make_report

NS = "noise_sensitivity_relevant"


def summ(metric: str, mean: float, lo: float | None = None, hi: float | None = None) -> MetricSummary:
    return MetricSummary(metric=metric, mean=mean, scored=3, unscored=0, ci_low=lo, ci_high=hi)


def test_gate_passes_a_lower_is_better_metric_at_or_under_its_threshold():
    g = run_gate([summ(NS, 0.3), summ("faithfulness", 0.3)], {NS: 0.3, "faithfulness": 0.3}, {NS: "noise"},
                 lower_is_better={NS})
    assert [r.status for r in g.results] == ["passed", "passed"]
    assert g.results[0].message == f"{NS} 0.300 <= 0.30 (lower is better)" and g.results[0].higher_is_better is False
    assert g.results[1].higher_is_better is True
    g = run_gate([summ(NS, 0.31)], {NS: 0.3}, {NS: "answers repeat wrong details"}, lower_is_better={NS})
    assert not g.passed
    assert g.results[0].message == f"{NS} 0.310 > 0.30 (lower is better): answers repeat wrong details"


def test_gate_on_the_bound_holds_the_upper_end_of_a_lower_is_better_metric():
    s = [summ(NS, 0.2, lo=0.1, hi=0.35)]
    assert run_gate(s, {NS: 0.3}, {}, lower_is_better={NS}).passed
    g = run_gate(s, {NS: 0.3}, {}, on="lower-bound", lower_is_better={NS})
    assert not g.passed and g.results[0].compared == 0.35 and "CI upper bound 0.350" in g.results[0].message
    assert run_gate(s, {NS: 0.4}, {}, on="lower-bound", lower_is_better={NS}).passed


def noisy_report(threshold: float = 0.25, gate_on: str = "mean"):
    values = {"a": {NS: 0.0, "faithfulness": 0.9}, "b": {NS: 0.6, "faithfulness": 0.9},
              "c": {NS: 0.3, "faithfulness": 0.9}}
    return make_report(values, {NS: threshold, "faithfulness": 0.8}, gate_on=gate_on)


def test_report_summary_records_the_direction_and_the_gate_uses_it():
    r = noisy_report(threshold=0.35)
    assert r.summary_for(NS).higher_is_better is False and r.summary_for("faithfulness").higher_is_better is True
    assert r.gate.passed  # mean 0.3 <= 0.35
    r = noisy_report(threshold=0.25)
    assert not r.gate.passed
    assert [g.metric for g in r.gate.results if g.status == "failed"] == [NS]


def test_worst_samples_of_a_lower_is_better_metric_are_the_highest():
    r = noisy_report()
    assert [s.id for s, _ in worst_samples(r, NS, 2)] == ["b", "c"]
    assert "worst 3 of 3 scored sample(s) (2 above 0.25)" in gate_failure_message(r)
    assert gate_failure_message(r).index("    b ") < gate_failure_message(r).index("    c ")


def test_every_report_says_lower_is_better():
    r = noisy_report()
    buf = io.StringIO()
    print_report(r, Console(file=buf, width=200))
    assert f"{NS}" in buf.getvalue() and "(lower is better)" in buf.getvalue()
    md = render_markdown(r)
    assert "noise\\_sensitivity\\_relevant (lower is better)" in md
    junit = render_junit(r)
    assert "0.300 above threshold 0.25 (lower is better)" in junit
    assert "highest-scoring samples (lower is better)" in junit
    html = render_html(r)
    assert "(lower is better)" in html and "≤ 0.25" in html and "2 of 3 scored samples above 0.25" in html
    data = json.loads(r.model_dump_json())
    assert [s["higher_is_better"] for s in data["summary"]] == [False, True]
    assert data["gate"]["results"][0]["higher_is_better"] is False


def test_cli_gates_noise_sensitivity_downwards(tmp_path: Path):
    row = {"id": "q1", "question": "Who developed Java?", "contexts": ["Java was developed by Sun Microsystems."],
           "answer": "Java was developed by Sun Microsystems.", "reference": "Sun Microsystems developed Java."}
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(row) + "\n")
    base = ["eval", str(data), "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "-m", NS]
    ok = cli(*base, "-t", f"{NS}=0.0")  # the fake judge finds no incorrect claim: 0 <= 0
    assert ok.exit_code == 0, ok.output
    assert "lower is better" in ok.output
    out = tmp_path / "r.json"
    ok = cli(*base, "-t", f"{NS}=0.0", "--out", str(out))
    report = json.loads(out.read_text())
    assert report["metrics"] == [NS] and report["summary"][0]["mean"] == 0.0


def test_a_resumed_run_prints_the_judge_totals_of_every_sample_besides_this_process():
    r = noisy_report()
    r.meta.update(judge_stats={"calls": 29, "cache_hits": 10, "failed_calls": 0, "prompt_tokens": 7687,
                               "completion_tokens": 629, "seconds": 56.9},
                  judge_totals={"calls": 141.0, "prompt_tokens": 38236.0, "completion_tokens": 3319.0},
                  resumed_samples=2)
    buf = io.StringIO()
    print_report(r, Console(file=buf, width=200))
    out = buf.getvalue()
    assert "29 calls, 10 from the cache" in out
    assert f"2 sample(s) resumed from a checkpoint; all {len(r.samples)} samples together: 141 calls, " \
           "38236 prompt + 3319 generated tokens" in out
    r.meta["resumed_samples"] = 0
    buf = io.StringIO()
    print_report(r, Console(file=buf, width=200))
    assert "resumed" not in buf.getvalue()
