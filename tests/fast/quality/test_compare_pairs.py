"""`compare --fail-on-regression` never calls "nothing compared" a pass: two runs with no sample id in common, or a
metric with fewer samples scored in both runs than --min-pairs, are refused with exit 9 and the reason; without the
flag the comparison says "undecided" and exits 0; a metric neither run could score for lack of data is not refused."""
from __future__ import annotations

import json
from pathlib import Path

from localragas.cli.options import EXIT_GATE_FAILED, EXIT_TOO_FEW_PAIRS
from localragas.data.schema import MetricResult
from localragas.quality.compare import MIN_PAIRS, compare_reports
from localragas.report import write_json
from localragas.run.regate import regate

from cli_helpers import cli
from reports_helpers import make_report


def _runs(tmp_path: Path, base: dict, new: dict) -> tuple[Path, Path]:
    b, n = tmp_path / "base.json", tmp_path / "new.json"
    write_json(make_report(base), b)
    write_json(make_report(new), n)
    return b, n


def _level(i: int) -> float:
    return 0.4 + (i % 7) / 20


def test_no_sample_id_in_common_is_refused_with_exit_9_not_passed(tmp_path):
    """The issue's case: the sample ids changed between the runs, so no pair: the gate must not go green."""
    b, n = _runs(tmp_path, {f"old-{i}": {"faithfulness": _level(i)} for i in range(30)},
                 {f"new-{i}": {"faithfulness": 0.1} for i in range(30)})
    out, md, page = tmp_path / "c.json", tmp_path / "c.md", tmp_path / "c.html"
    r = cli("compare", b, n, "--fail-on-regression", "--out", out, "--md", md, "--html", page)
    assert r.exit_code == EXIT_TOO_FEW_PAIRS == 9, r.output
    assert ("Error: --fail-on-regression: too few pairs to decide (fewer than --min-pairs 10): faithfulness (0 pairs); "
            "no sample id is in both runs (30 only in the base, 30 only in the new run): a regression cannot be ruled "
            "out; compare runs over the same samples") in " ".join(r.output.split())
    assert "no metric regressed beyond noise" not in r.output
    data = json.loads(out.read_text())  # the outputs are written before the refusal, and say it too
    assert data["min_pairs"] == 10 and data["in_both"] == 0
    assert [(m["metric"], m["pairs"], m["verdict"]) for m in data["metrics"]] == [("faithfulness", 0, "not_comparable")]
    assert "⚠️ undecided (too few pairs)" in md.read_text() and "**undecided: too few pairs" in md.read_text()
    html = page.read_text()
    assert "undecided: too few pairs to decide" in html and "no sample id in both runs" in html
    assert "no metric regressed beyond noise" not in html


def test_without_the_flag_the_comparison_says_undecided_and_exits_0(tmp_path):
    b, n = _runs(tmp_path, {f"old-{i}": {"faithfulness": 0.9} for i in range(12)},
                 {f"new-{i}": {"faithfulness": 0.1} for i in range(12)})
    r = cli("compare", b, n)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "UNDECIDED (too few pairs)" in text and "undecided: too few pairs to decide" in text
    assert "warning: no sample id in both runs (12 only in the base, 12 only in the new run): nothing could be paired" \
        in text
    assert "no metric regressed beyond noise" not in text


def test_fewer_pairs_than_the_minimum_are_refused_and_min_pairs_lowers_it(tmp_path):
    """Five shared samples that all dropped: over five pairs the interval is too narrow to trust either way."""
    b, n = _runs(tmp_path, {f"s{i}": {"faithfulness": _level(i)} for i in range(5)},
                 {f"s{i}": {"faithfulness": _level(i) - 0.2} for i in range(5)})
    r = cli("compare", b, n, "--fail-on-regression")
    assert r.exit_code == EXIT_TOO_FEW_PAIRS, r.output
    assert "faithfulness (5 pairs)" in r.output and "no sample id" not in r.output
    r = cli("compare", b, n, "--fail-on-regression", "--min-pairs", "5")
    assert r.exit_code == EXIT_GATE_FAILED, r.output  # decided, and regressed
    assert "regressed beyond noise: faithfulness" in r.output
    r = cli("compare", b, n, "--fail-on-regression", "--min-pairs", "1")
    assert r.exit_code == 2 and "--min-pairs" in r.output  # one pair has no interval at all


def test_each_metric_needs_its_pairs_and_undecided_wins_over_regressed(tmp_path):
    """faithfulness regressed over 20 pairs; context_recall lost its scores to judge errors in the new run (2 pairs
    left): exit 9, naming context_recall, not 1."""
    base = make_report({f"s{i}": {"faithfulness": _level(i), "context_recall": _level(i)} for i in range(20)})
    new = make_report({f"s{i}": {"faithfulness": _level(i) - 0.3, "context_recall": _level(i)} for i in range(20)})
    for sample in new.samples[2:]:
        sample.metrics["context_recall"] = MetricResult.unscored_because("judge_error: timed out")
    new = regate(new, {})
    b, n = tmp_path / "b.json", tmp_path / "n.json"
    write_json(base, b)
    write_json(new, n)
    r = cli("compare", b, n, "--fail-on-regression")
    assert r.exit_code == EXIT_TOO_FEW_PAIRS, r.output
    text = " ".join(r.output.split())
    assert "fewer than --min-pairs 10): context_recall (2 pairs): a regression cannot be ruled out" in text
    assert "regressed beyond noise: faithfulness" in text  # said, but the undecided metric decides the exit code
    c = compare_reports(base, new)
    assert [m.metric for m in c.undecided] == ["context_recall"] and c.regressed == ["faithfulness"]


def test_a_metric_neither_run_could_score_for_lack_of_data_is_not_refused(tmp_path):
    """No row has a reference in either run: context_recall is 'not evaluated' there, as eval's gate says."""
    values = {f"s{i}": {"faithfulness": _level(i), "context_recall": None} for i in range(MIN_PAIRS)}
    b, n = _runs(tmp_path, values, values)
    r = cli("compare", b, n, "--fail-on-regression")
    assert r.exit_code == 0, r.output
    assert "not evaluated (in either run)" in r.output and "no metric regressed beyond noise" in r.output


def test_a_metric_scored_in_the_base_only_is_undecided(tmp_path):
    """The new run's rows lost their references: context_recall has no pair; its regression cannot be ruled out."""
    b, n = _runs(tmp_path, {f"s{i}": {"faithfulness": 0.8, "context_recall": 0.7} for i in range(MIN_PAIRS)},
                 {f"s{i}": {"faithfulness": 0.8, "context_recall": None} for i in range(MIN_PAIRS)})
    r = cli("compare", b, n, "--fail-on-regression")
    assert r.exit_code == EXIT_TOO_FEW_PAIRS and "context_recall (0 pairs)" in r.output, r.output
