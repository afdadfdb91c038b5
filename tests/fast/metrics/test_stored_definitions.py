"""A report stores each metric's definition (Report.definitions) and its readers use the stored one: the gate, the
HTML, the Markdown evidence summary, ragas names and compare; a metric the registry does not know renders from its
definition; a report written before definitions were stored gets the registry's."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localragas.quality.compare import compare_reports
from localragas.metrics import all_metrics
from localragas.report import read_json
from localragas.report.html_report import render_html

from cli_helpers import cli

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> dict:
    """The JSON report of the example run with the four core metrics, as a dict."""
    out = tmp_path_factory.mktemp("run") / "r.json"
    r = cli("eval", EXAMPLE, *FAST, "--no-gate", "--out", out)
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text(encoding="utf-8"))


def _write(tmp_path: Path, data: dict, name: str = "edited.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _embedded(html: str) -> dict:
    text = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(text)


def test_a_run_stores_every_metric_definition_as_its_registry_declares(stored):
    known = all_metrics()
    assert list(stored["definitions"]) == stored["metrics"]
    for name, d in stored["definitions"].items():
        assert d == json.loads(known[name].describe().model_dump_json())
    faith = stored["definitions"]["faithfulness"]
    assert faith["default"] is True and faith["mode"] == "probability" and faith["graded_family"] == "verify_statement"
    assert faith["thresholds"] == {"probability": 0.5, "calibrated": 0.8, "json": 0.8}
    assert faith["renderer"]["kind"] == "verdicts" and faith["summary"]["kind"] == "items"


def test_a_stored_definition_other_than_the_registry_gates_and_renders_by_the_stored_one(stored, tmp_path):
    data = json.loads(json.dumps(stored))
    del data["meta"]["thresholds"]  # the defaults then come from the stored definitions
    faith = data["definitions"]["faithfulness"]
    faith.update(higher_is_better=False, thresholds={"probability": 0.01}, definition="STORED definition text",
                 problem="STORED problem")
    faith["summary"] = {**faith["summary"], "some_bad": "STORED summary {bad} of {total}",
                        "all_good": "STORED summary: all {total}"}
    path = _write(tmp_path, data)
    html, md, out = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "again.json"
    r = cli("report", path, "--html", html, "--md", md, "--out", out)
    assert r.exit_code == 1, r.output  # faithfulness: lower is better now, and its mean is above 0.01
    again = json.loads(out.read_text(encoding="utf-8"))
    gate = {g["metric"]: g for g in again["gate"]["results"]}
    assert gate["faithfulness"]["threshold"] == 0.01 and gate["faithfulness"]["status"] == "failed"
    assert gate["faithfulness"]["higher_is_better"] is False
    assert "> 0.01 (lower is better): STORED problem" in gate["faithfulness"]["message"]
    assert again["definitions"]["faithfulness"]["definition"] == "STORED definition text"
    assert gate["answer_relevancy"]["threshold"] == 0.75  # the others keep theirs
    page = html.read_text(encoding="utf-8")
    card = re.search(r'<article class="card metric [^"]*" id="metric-faithfulness">.*?</article>', page).group(0)
    assert "(lower is better)" in card and "STORED definition text" in card and "≤ 0.01" in card
    assert _embedded(page)["definitions"]["faithfulness"]["higher_is_better"] is False  # app.js reads it
    assert "STORED summary" in md.read_text(encoding="utf-8")


def test_a_metric_the_registry_does_not_know_renders_and_gates_from_its_definition(stored, tmp_path):
    text = json.dumps(stored).replace('"faithfulness"', '"plugin_metric"')  # every key and name of the metric
    data = json.loads(text)
    d = data["definitions"]["plugin_metric"]
    d.update(definition="a plugin's own metric", ragas_name="plugin_in_ragas", problem="the plugin is unhappy")
    del data["meta"]["thresholds"]
    path = _write(tmp_path, data)
    report = read_json(path)
    assert report.definitions["plugin_metric"].definition == "a plugin's own metric"
    html, md, ragas = tmp_path / "p.html", tmp_path / "p.md", tmp_path / "ragas.json"
    r = cli("report", path, "--html", html, "--md", md, "--out", ragas, "--ragas-names", "--threshold",
            "plugin_metric=0.99")
    assert r.exit_code == 1, r.output
    assert "plugin_metric" in r.output and "the plugin is unhappy" in r.output
    page = html.read_text(encoding="utf-8")
    assert 'id="metric-plugin_metric"' in page and "a plugin&#39;s own metric" in page
    assert _embedded(page)["definitions"]["plugin_metric"]["renderer"]["kind"] == "verdicts"
    assert "unsupported" in md.read_text(encoding="utf-8")  # its stored summary: the item summary of claims
    named = json.loads(ragas.read_text(encoding="utf-8"))
    assert "plugin_in_ragas" in named["metrics"] and named["meta"]["localragas_names"]["plugin_in_ragas"] == \
        "plugin_metric"
    assert read_json(ragas).metrics == report.metrics  # read back under its own name
    assert [c.metric for c in compare_reports(report, read_json(ragas)).metrics] == report.metrics


def test_an_old_report_without_definitions_gets_the_registry_definitions(stored, tmp_path):
    data = json.loads(json.dumps(stored))
    del data["definitions"]
    data["definitions_gone"] = True  # a stray key is ignored, as before
    path = _write(tmp_path, data, "old.json")
    report = read_json(path)
    assert report.definitions["faithfulness"] == all_metrics()["faithfulness"].describe()
    html, out = tmp_path / "old.html", tmp_path / "old-again.json"
    r = cli("report", path, "--html", html, "--out", out)
    assert r.exit_code == cli("report", _write(tmp_path, stored, "new.json")).exit_code
    assert json.loads(out.read_text(encoding="utf-8"))["gate"]["results"] == stored["gate"]["results"]
    page = html.read_text(encoding="utf-8")
    assert all_metrics()["faithfulness"].definition.split("(")[0].strip() in page
    old = read_json(path).model_copy(update={"definitions": {}})  # made in Python without them: still renders
    assert _embedded(render_html(old))["definitions"]["context_precision"]["renderer"]["kind"] == "chunks"


def test_compare_reads_the_direction_from_the_reports(stored, tmp_path):
    data = json.loads(json.dumps(stored))
    data["definitions"]["faithfulness"]["higher_is_better"] = False
    base, new = read_json(_write(tmp_path, stored, "b.json")), read_json(_write(tmp_path, data, "n.json"))
    got = {c.metric: c for c in compare_reports(base, new).metrics}
    assert got["faithfulness"].higher_is_better is False and got["context_recall"].higher_is_better is True


def test_a_stored_definition_is_text_in_the_page_never_markup(stored, tmp_path):
    data = json.loads(json.dumps(stored))
    data["definitions"]["faithfulness"]["definition"] = '<img src=x onerror="alert(1)"> & co'
    data["definitions"]["faithfulness"]["renderer"] = {"kind": "toString", "keys": ["claims"]}  # not a renderer
    page = render_html(read_json(_write(tmp_path, data)))
    assert '<p class="definition">&lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; co</p>' in page
    assert "<img" not in page.split('id="report-data"')[0]
    assert _embedded(page)["definitions"]["faithfulness"]["renderer"]["kind"] == "toString"  # app.js: key/value list
