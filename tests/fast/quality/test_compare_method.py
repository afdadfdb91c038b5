"""`compare` knows the method: two runs that did not measure the same way are named as such first, a change is not
called the RAG system's, `--fail-on-regression` refuses (exit 7) unless `--allow-method-change`, and `--html` draws
each metric's paired difference with its interval."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from localragas.cli.options import EXIT_GATE_FAILED, EXIT_METHOD_CHANGED
from localragas.quality.compare import compare_reports
from localragas.report import write_json
from localragas.report.comparison import render_comparison_markdown

from cli_helpers import cli
from reports_helpers import make_report

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """The issue's case: the 16 examples judged by sentence (the default) and by claims, with the fake judge."""
    folder = tmp_path_factory.mktemp("runs")
    sentences, claims = folder / "sentences.json", folder / "claims.json"
    for out, extra in ((sentences, []), (claims, ["--metric-option", "faithfulness.statements=claims"])):
        r = cli("eval", EXAMPLE, *FAST, *extra, "--no-gate", "--out", out)
        assert r.exit_code == 0, r.output
    return sentences, claims


def test_sentences_vs_claims_says_first_that_the_method_changed(runs):
    """The +0.038 change the issue saw called "within noise" is named a change of method, before any figure."""
    r = cli("compare", *runs)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == ("the method changed: the differences below mix the RAG system's change with the method's "
                        "(faithfulness)")
    assert lines[1].strip() == "- faithfulness: statements=sentences in base, claims in new"
    row = next(line for line in lines if line.startswith("│ faithfulness"))
    assert "+0.038" in row and "within noise (method changed)" in row
    assert "within noise (method changed)" not in next(line for line in lines if line.startswith("│ context_recall"))
    assert lines[-1] == "no metric regressed beyond noise (under a changed method: see above)"


def test_fail_on_regression_refuses_a_changed_method_unless_allowed(runs, tmp_path):
    out = tmp_path / "c.json"
    r = cli("compare", *runs, "--fail-on-regression", "--out", out)
    assert r.exit_code == EXIT_METHOD_CHANGED == 7, r.output
    assert ("Error: --fail-on-regression: the runs did not measure the same way (faithfulness: statements=sentences "
            "in base, claims in new)") in r.output and "--allow-method-change" in r.output
    data = json.loads(out.read_text())  # the outputs are written before the refusal
    assert data["method_differences"] == [{"aspect": "options", "text": "faithfulness: statements=sentences in base, "
                                           "claims in new", "metrics": ["faithfulness"]}]
    assert [m["method_changed"] for m in data["metrics"]] == [True, False, False, False]
    assert cli("compare", *runs, "--fail-on-regression", "--allow-method-change").exit_code == 0
    assert cli("compare", runs[0], runs[0], "--fail-on-regression").exit_code == 0  # the same method: no refusal


def test_a_regression_under_a_changed_method_is_not_called_the_rag_systems(tmp_path):
    base = make_report({f"s{i}": {"faithfulness": 0.9, "context_recall": 0.5 + i / 100} for i in range(20)},
                       judge="qwen2.5-1.5b")
    worse = make_report({f"s{i}": {"faithfulness": 0.6 - i / 200, "context_recall": 0.5 + i / 100} for i in range(20)},
                        judge="smollm2-135m")
    b, n = tmp_path / "b.json", tmp_path / "n.json"
    write_json(base, b)
    write_json(worse, n)
    r = cli("compare", b, n)
    assert "regressed beyond noise:" not in r.output
    assert ("moved beyond noise under a changed method (not a change of the RAG system alone): faithfulness "
            "regressed") in r.output
    assert cli("compare", b, n, "--fail-on-regression").exit_code == EXIT_METHOD_CHANGED
    assert cli("compare", b, n, "--fail-on-regression", "--allow-method-change").exit_code == EXIT_GATE_FAILED
    md = render_comparison_markdown(compare_reports(base, worse))
    assert md.splitlines()[2].startswith("> ⚠️ **the method changed: the differences below mix")
    assert "🔴 regressed (method changed)" in md


def test_each_aspect_of_the_method_is_named(tmp_path):
    base, new = make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.7}}), \
        make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.7}}, gate_on="lower-bound")
    base.meta.update(calibration={"source": "qwen.json", "sha256": "a" * 64, "families": {"verify_statement": {}}},
                     prompts={"sha256": {"verify_statement": "1" * 64}},
                     metric_options={"faithfulness": {"verdicts": "probability"}})
    new.meta.update(calibration=None, prompts={"sha256": {"verify_statement": "2" * 64}},
                    metric_options={"faithfulness": {"verdicts": "json"}})
    texts = {d.aspect: d.text for d in compare_reports(base, new).method_differences}
    assert texts == {
        "options": "faithfulness: verdicts=probability in base, json in new",
        "calibration": "calibration: qwen.json (sha256 aaaaaaaaaaaa) in base, none in new (graded scores on another "
                       "scale)",
        "prompts": "prompts asked in other words: verify_statement: built-in (localragas ?) in base, built-in "
                   "(localragas ?) in new",
        "gate": "gate on: mean in base, lower-bound in new",
    }


def test_a_gate_setting_alone_moves_no_score_and_is_not_refused(tmp_path):
    values = {f"s{i}": {"faithfulness": i / 10} for i in range(10)}
    b, n = tmp_path / "b.json", tmp_path / "n.json"
    write_json(make_report(values, thresholds={"faithfulness": 0.5}), b)
    write_json(make_report(values, thresholds={"faithfulness": 0.9}), n)
    r = cli("compare", b, n, "--fail-on-regression")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("the scores were measured the same way; these differ, and move no score:\n"
                               "  - gate threshold of faithfulness: 0.50 in base, 0.90 in new\n")


def test_html_draws_each_paired_difference_with_its_interval_and_the_zero_line(runs, tmp_path):
    page_path, out = tmp_path / "c.html", tmp_path / "c.json"
    r = cli("compare", *runs, "--html", page_path, "--out", out)
    assert r.exit_code == 0, r.output
    page = page_path.read_text()
    data = {m["metric"]: m for m in json.loads(out.read_text())["metrics"]}
    assert "<script" not in page and "http" not in page.split("</head>")[1]  # offline: no script, no link out
    assert "default-src 'none'" in page
    method = page.index("faithfulness: statements=sentences in base, claims in new")
    svg = ET.fromstring(re.search(r"<svg .*?</svg>", page, re.S).group(0))
    assert method < page.index("<svg")  # the method first
    zero = next(e for e in svg.iter("line") if e.get("class") == "zero")
    x0 = float(zero.get("x1"))
    groups = {g.get("data-metric"): g for g in svg.iter("g")}
    assert list(groups) == list(data)
    f = groups["faithfulness"]
    assert float(f.get("data-diff")) == data["faithfulness"]["diff"] == pytest.approx(0.038, abs=5e-4)
    assert float(f.get("data-low")) == data["faithfulness"]["ci_low"] < 0 < float(f.get("data-high"))
    whisker, point = f.find("line"), f.find("circle")
    assert float(whisker.get("x1")) < x0 < float(point.get("cx")) < float(whisker.get("x2"))  # across zero, right of it
    assert f.get("class") == "within_noise" and "within noise (method changed)" in f.find("title").text
    recall = groups["context_recall"].find("circle")
    assert float(recall.get("cx")) == x0  # no change: on the zero line
