"""Markdown and JUnit writers, the `report` command (formats from a JSON report, no judging), eval's new flags."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from localragas.report import write_json
from localragas.report.junit import render_junit
from localragas.report.markdown import render_markdown

from cli_helpers import cli
from reports_helpers import make_report

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]
HOSTILE = "bad|id <script>alert(1)</script> [x](http://evil) \x07"


def failing_report(**kw):
    return make_report({"good": {"faithfulness": 1.0, "context_recall": 0.9},
                        "bad": {"faithfulness": 0.0, "context_recall": None},
                        HOSTILE: {"faithfulness": 0.25, "context_recall": 0.8}},
                       thresholds={"faithfulness": 0.8, "context_recall": 0.5}, **kw)


def test_markdown_renders_a_table_with_verdicts_and_worst_samples():
    md = render_markdown(failing_report())
    assert md.startswith("### localragas: ❌ quality gate FAILED")
    html = MarkdownIt().enable("table").render(md)
    assert html.count("<table>") == 2  # the metric table and the worst samples of the failed metric
    assert "<td>faithfulness</td>" in html and "❌ FAIL" in html and "✅ pass" in html
    assert "bad" in html and "unsupported 1/2" in html
    assert "<script>" not in html and 'href="http://evil"' not in html  # sample text stays text
    rows = [line for line in md.splitlines() if line.startswith("| faithfulness |")]
    assert len(rows) == 1 and rows[0].count(" | ") == 6  # a pipe in an id does not break the table


def test_markdown_gate_off_and_passing():
    assert render_markdown(failing_report(gate=False)).startswith("### localragas: quality gate off")
    ok = make_report({"a": {"faithfulness": 0.9}, "b": {"faithfulness": 1.0}}, thresholds={"faithfulness": 0.5})
    md = render_markdown(ok)
    assert md.startswith("### localragas: ✅ quality gate passed") and "0.900 – 1.000" in md


def junit_checked(xml: str):
    """Parse with junitparser and check the JUnit structure CI systems (Jenkins, GitLab) expect."""
    from junitparser import JUnitXml

    root = ET.fromstring(xml.encode())
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite"
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)
        for c in cases:
            assert c.get("classname") and c.get("name") and float(c.get("time")) >= 0
            f = c.find("failure")
            if f is not None:
                assert f.get("message") and f.get("type")
    return JUnitXml.fromstring(xml)


def test_junit_each_metric_gate_is_a_test_case():
    xml = render_junit(failing_report())
    parsed = junit_checked(xml)
    suite = next(iter(parsed))
    cases = {c.name: c for c in suite}
    assert set(cases) == {"faithfulness", "context_recall"}
    assert cases["context_recall"].is_passed
    (failure,) = cases["faithfulness"].result
    assert failure.message.startswith("faithfulness mean 0.417 below threshold 0.80")
    assert "bad: 0.000" in failure.text and "unsupported 1/2" in failure.text
    assert suite.failures == 1 and suite.tests == 2


def test_junit_lower_bound_gate_off_and_not_evaluated():
    xml = render_junit(failing_report(gate_on="lower-bound"))
    assert "faithfulness CI lower bound" in xml
    off = next(iter(junit_checked(render_junit(failing_report(gate=False)))))
    assert off.skipped == 2 and off.failures == 0
    none = make_report({"a": {"context_recall": None}}, thresholds={"context_recall": 0.5})
    suite = next(iter(junit_checked(render_junit(none))))
    assert suite.skipped == 1 and "not evaluated" in render_junit(none)


def test_junit_drops_characters_xml_cannot_hold():
    xml = render_junit(failing_report())
    assert "\x07" not in xml
    junit_checked(xml)


@pytest.fixture
def stored(tmp_path):
    path = tmp_path / "r.json"
    write_json(failing_report(), path)
    return path


def test_report_command_writes_every_format_and_keeps_the_gate(stored, tmp_path):
    out = {k: tmp_path / f"x.{k}" for k in ("html", "md", "junit", "csv", "json")}
    r = cli("report", str(stored), "--md", str(out["md"]), "--junit", str(out["junit"]),
            "--csv", str(out["csv"]), "--out", str(out["json"]))
    assert r.exit_code == 1, r.output  # the stored run failed its gate
    assert "quality gate FAILED" in r.output and "95% CI" in r.output
    assert out["md"].read_text().startswith("### localragas: ❌")
    junit_checked(out["junit"].read_text())
    assert "faithfulness" in out["csv"].read_text().splitlines()[0]
    again = json.loads(out["json"].read_text())
    assert again["summary"] == json.loads(stored.read_text())["summary"]  # recomputed aggregates are identical


def test_report_command_can_regate(stored):
    r = cli("report", str(stored), "-t", "faithfulness=0.2")
    assert r.exit_code == 0 and "quality gate PASSED" in r.output
    r = cli("report", str(stored), "--no-gate")
    assert r.exit_code == 0 and "quality gate: off" in r.output
    r = cli("report", str(stored), "-t", "answer_relevancy=0.2")
    assert r.exit_code == 2 and "not in this report" in r.output


def test_report_command_fills_intervals_of_an_older_report(stored, tmp_path):
    data = json.loads(stored.read_text())
    for s in data["summary"]:
        del s["ci_low"], s["ci_high"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    out = tmp_path / "new.json"
    cli("report", str(old), "--out", str(out), "--no-gate")
    assert json.loads(out.read_text())["summary"][0]["ci_low"] is not None


def test_eval_writes_md_and_junit_and_gates_on_lower_bound(tmp_path):
    md, junit, js = tmp_path / "s.md", tmp_path / "j.xml", tmp_path / "r.json"
    args = ["eval", str(EXAMPLE), *FAST, "-t", "faithfulness=0.5", "--md", str(md), "--junit", str(junit), "--out", str(js)]
    mean_run = cli(*args)
    lb_run = cli(*args, "--gate-on", "lower-bound")
    report = json.loads(js.read_text())
    assert report["gate"]["on"] == "lower-bound" and report["meta"]["ci"]["resamples"] == 2000
    assert all(s["ci_low"] is not None for s in report["summary"])
    g = {x["metric"]: x for x in report["gate"]["results"]}
    assert g["faithfulness"]["compared"] == g["faithfulness"]["ci_low"] < g["faithfulness"]["mean"]
    assert lb_run.exit_code == (0 if report["gate"]["passed"] else 1), lb_run.output
    assert md.read_text().startswith("### localragas:") and "(on the 95% CI lower bound)" in md.read_text()
    junit_checked(junit.read_text())
    assert "wrote" in mean_run.output and "95% CI" in mean_run.output


def test_eval_gate_on_from_config_and_bad_value(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localragas.toml").write_text('gate_on = "lower-bound"\n')
    js = tmp_path / "r.json"
    cli("eval", str(EXAMPLE), *FAST, "--no-gate", "--out", str(js))
    assert json.loads(js.read_text())["gate"]["on"] == "lower-bound"
    (tmp_path / "localragas.toml").write_text('gate_on = "median"\n')
    r = cli("eval", str(EXAMPLE), *FAST)
    assert r.exit_code == 2 and "gate_on" in r.output
    r = cli("eval", str(EXAMPLE), *FAST, "--gate-on", "median")
    assert r.exit_code == 2


def test_reports_get_normal_file_permissions(tmp_path):
    import os
    import stat

    from localragas.core.atomic_write import write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "r.html", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.html").stat().st_mode) == 0o644  # readable by a web server, like open()
