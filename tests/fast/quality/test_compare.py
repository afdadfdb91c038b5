"""`localragas compare`: paired changes with intervals; a real shift is flagged, noise is not; mismatches warn."""
from __future__ import annotations

import json

import numpy as np
import pytest

from localragas.quality.compare import compare_reports, verdict_of
from localragas.report import write_json
from localragas.report.comparison import render_comparison_markdown

from cli_helpers import cli
from reports_helpers import make_report

IDS = [f"s{i:02d}" for i in range(40)]


def scores(seed: int, shift: float = 0.0, noise: float = 0.0, base_seed: int = 1) -> dict[str, dict[str, float]]:
    """Per-sample faithfulness and context_recall: a common per-sample level, plus a shift and judge noise."""
    level = np.random.default_rng(base_seed).uniform(0.3, 0.9, size=len(IDS))
    jitter = np.random.default_rng(seed).normal(0, noise, size=len(IDS)) if noise else np.zeros(len(IDS))
    return {i: {"faithfulness": float(np.clip(v + shift + j, 0, 1)), "context_recall": float(np.clip(v + j, 0, 1))}
            for i, v, j in zip(IDS, level, jitter)}


def test_a_real_shift_is_flagged_and_noise_is_not():
    base = make_report(scores(seed=1))
    worse = make_report(scores(seed=2, shift=-0.08, noise=0.03))
    c = compare_reports(base, worse)
    by = {m.metric: m for m in c.metrics}
    assert by["faithfulness"].verdict == "regressed"
    assert by["faithfulness"].ci_high < 0 and by["faithfulness"].pairs == 40
    assert by["context_recall"].verdict == "within_noise"  # same level, only judge noise
    assert c.regressed == ["faithfulness"]
    better = compare_reports(worse, base)
    assert better.improved == ["faithfulness"] and not better.regressed


def test_identical_runs_are_within_noise_and_list_no_changed_samples():
    r = make_report(scores(seed=1))
    c = compare_reports(r, r)
    assert all(m.verdict == "within_noise" and m.diff == 0 for m in c.metrics)
    assert c.largest_changes == {"faithfulness": [], "context_recall": []}
    assert c.warnings == []


def test_largest_changes_are_listed_biggest_first():
    base = make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.5}, "c": {"faithfulness": 0.5}})
    new = make_report({"a": {"faithfulness": 0.6}, "b": {"faithfulness": 0.1}, "c": {"faithfulness": 0.5}})
    moved = compare_reports(base, new, top=5).largest_changes["faithfulness"]
    assert [(s.id, s.diff) for s in moved] == [("b", -0.4), ("a", 0.1)]


def test_mismatched_judges_embedders_and_thresholds_are_named_as_differences_of_method():
    base = make_report(scores(1), judge="qwen2.5-1.5b", thresholds={"faithfulness": 0.8})
    new = make_report(scores(1), judge="smollm2-135m", embedder="other", thresholds={"faithfulness": 0.7})
    c = compare_reports(base, new)
    by = {d.aspect: d for d in c.method_differences}
    assert by["judge"].text == "judge: qwen2.5-1.5b (fp-qwen2.5-1) in base, smollm2-135m (fp-smollm2-1) in new"
    assert by["judge"].metrics == ["faithfulness", "context_recall"]  # both judged
    assert by["embedder"].text == "embedder: fake in base, other in new"
    assert by["embedder"].metrics == []  # neither uses the embedder
    assert by["gate"].text == "gate threshold of faithfulness: 0.80 in base, 0.70 in new" and by["gate"].metrics == []
    assert c.method_changed_for == ["faithfulness", "context_recall"] and c.warnings == []


def test_samples_in_one_run_only_and_scored_in_one_only():
    base = make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.7}, "c": {"faithfulness": 0.9},
                        "gone": {"faithfulness": 1.0}})
    new = make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": None}, "c": {"faithfulness": 0.9},
                       "added": {"faithfulness": 0.0}})
    c = compare_reports(base, new)
    assert c.only_in_base == ["gone"] and c.only_in_new == ["added"]
    m = c.metrics[0]
    assert m.pairs == 2 and m.became_unscored == ["b"]
    assert any("3 samples in both runs; 1 only in the base, 1 only in the new run" in w for w in c.warnings)


def test_metric_in_one_run_only_warns_and_is_not_compared():
    base = make_report({"a": {"faithfulness": 0.5, "context_recall": 0.5}, "b": {"faithfulness": 0.6, "context_recall": 0.2}})
    new = make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.6}})
    c = compare_reports(base, new)
    assert [m.metric for m in c.metrics] == ["faithfulness"]
    assert [d.text for d in c.method_differences] == ["metrics: context_recall only in base (not compared)"]
    assert c.method_changed_for == []  # the compared metric was measured the same way


@pytest.mark.parametrize("pairs, lo, hi, hib, verdict", [
    (10, 0.01, 0.05, True, "improved"), (10, -0.05, -0.01, True, "regressed"), (10, -0.01, 0.02, True, "within_noise"),
    (10, 0.01, 0.05, False, "regressed"), (1, None, None, True, "not_comparable"),
])
def test_verdict_rules(pairs, lo, hi, hib, verdict):
    assert verdict_of(pairs, lo, hi, hib) == verdict


def test_markdown_of_a_comparison():
    c = compare_reports(make_report(scores(1)), make_report(scores(2, shift=-0.1, noise=0.02)), "main.json", "pr|x.json")
    md = render_comparison_markdown(c)
    assert md.startswith("### localragas compare: main.json → pr\\|x.json")
    assert "| faithfulness |" in md and "🔴 regressed" in md and "largest per-sample changes" in md


def test_cli_compare_exit_codes_and_outputs(tmp_path):
    base, worse = tmp_path / "base.json", tmp_path / "new.json"
    write_json(make_report(scores(1)), base)
    write_json(make_report(scores(2, shift=-0.1, noise=0.02), judge="other"), worse)
    r = cli("compare", str(base), str(worse))
    assert r.exit_code == 0, r.output
    assert "REGRESSED (method changed)" in r.output and "judge: fake (fp-fake) in base, other (fp-other) in new" in r.output
    out, md = tmp_path / "c.json", tmp_path / "c.md"
    r = cli("compare", str(base), str(worse), "--fail-on-regression", "--allow-method-change", "--out", str(out),
            "--md", str(md))
    assert r.exit_code == 1, r.output
    data = json.loads(out.read_text())
    assert [m["verdict"] for m in data["metrics"]] == ["regressed", "within_noise"]
    assert "🔴 regressed" in md.read_text()
    r = cli("compare", str(base), str(base), "--fail-on-regression")
    assert r.exit_code == 0 and "no metric regressed beyond noise" in r.output


def test_cli_compare_refuses_a_file_that_is_not_a_report(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    r = cli("compare", str(bad), str(bad))
    assert r.exit_code == 2 and "not a localragas JSON report" in r.output
