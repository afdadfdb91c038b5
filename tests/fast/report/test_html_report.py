"""The HTML report: one self-contained offline file, hostile sample text kept inert, every metric and reason shown."""
from __future__ import annotations

import base64
import html
import hashlib
import json
import re

import pytest

from localragas import evaluate
from localragas.report.html_chart import bin_counts, histogram_svg
from localragas.report.html_report import embed_json, render_html, write_html
from localragas.data.schema import Gate, GateResult, MetricResult, MetricSummary, Report, Sample, SampleResult, SkippedRow

SCRIPT = "<script>__pwned=1;alert(1)</script>"  # no '.': the fake judge splits claims at sentence ends
IMG = '"><img src=x onerror=__pwned=2>'
CONTEXTS = ["Acme Cloud Storage offers three storage tiers: Standard, Infrequent Access and Archive.",
            "The Archive tier is the cheapest tier and restores data within 12 hours."]


def hostile_report(gate: bool = True) -> Report:
    samples = [
        Sample(id=f"evil{IMG}", category="<b>cat</b>", question="Which storage tiers does Acme offer?",
               contexts=CONTEXTS, reference="Standard, Infrequent Access and Archive.",
               answer=f"{SCRIPT} Acme offers three storage tiers. {IMG} The moon is made of cheese today."),
        Sample(id="no-reference", category="plain", question="Which tier is cheapest?", contexts=CONTEXTS,
               answer="The Archive tier is the cheapest tier."),
    ]
    return evaluate(samples, judge="fake", embedder="fake", gate=gate)


def embedded(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m, "no embedded report data"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def report() -> Report:
    return hostile_report()


@pytest.fixture(scope="module")
def page(report) -> str:
    return render_html(report)


def test_page_makes_no_external_request(page):
    assert not re.search(r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"https?://", page.replace("\\u003c", "<"))  # not even in text: nothing to fetch
    assert "@import" not in page and not re.search(r"url\(", page)
    assert not re.search(r"<(?:link[^>]*stylesheet|script[^>]*\ssrc=|iframe|object|embed)", page, re.I)
    assert "default-src 'none'" in page


def test_csp_allows_exactly_the_inlined_style_and_script(page):
    def sha(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1
    assert f"style-src 'sha256-{sha(style)}'" in page
    assert f"script-src 'sha256-{sha(script[0])}'" in page


def test_hostile_sample_text_stays_inert_data(report, page):
    assert SCRIPT not in page and "<img" not in page and "<b>cat" not in page
    assert page.count("</script>") == 2  # the data block and the app; sample text closed nothing
    assert "\\u003cscript\\u003e__pwned=1" in page  # the claim is there, as escaped JSON
    assert embedded(page) == json.loads(report.model_dump_json())  # and reads back unchanged
    claims = [c["claim"] for c in report.samples[0].metrics["faithfulness"].evidence["claims"]]
    assert any(SCRIPT in c for c in claims), "the fixture must put the script into the evidence"
    assert "&lt;b&gt;cat&lt;/b&gt;" in page  # static by-category table: escaped


def test_embedded_json_escapes_every_breakout():
    rep = Report(metrics=[], gate=Gate(enabled=False, passed=True), meta={"dataset": "</script><!-- & -->"})
    text = embed_json(rep)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["meta"]["dataset"] == "</script><!-- & -->"


def test_every_metric_its_numbers_and_unscored_reasons_are_shown(report, page):
    for s in report.summary:
        assert f'id="metric-{s.metric}"' in page
        assert f"{s.mean:.3f}" in page
        assert f"<dt>scored</dt><dd>{s.scored}</dd>" in page
    recall = report.summary_for("context_recall")
    assert recall.unscored_reasons == {"no_reference": 1}
    assert "<code>no_reference</code> × 1" in page
    assert page.count('<svg class="hist"') == len(report.metrics)
    assert "threshold 0.50" in page  # faithfulness threshold (graded verdicts) drawn on its histogram


@pytest.mark.skipif("ci_low" not in MetricSummary.model_fields, reason="confidence intervals not in the schema yet")
def test_confidence_interval_shown_when_present():
    rep = Report(metrics=["faithfulness"], gate=Gate(enabled=True, passed=True),
                 summary=[MetricSummary(metric="faithfulness", mean=0.5, scored=2, unscored=0, ci_low=0.25, ci_high=0.75)],
                 samples=[SampleResult(id=i, metrics={"faithfulness": MetricResult.of(v)}) for i, v in (("a", 0.25), ("b", 0.75))])
    assert "95% CI 0.250–0.750" in render_html(rep)


def test_verdict_banner_failed_passed_and_off(report, page):
    assert report.gate.enabled and not report.gate.passed
    assert "Quality gate FAILED" in page
    for g in report.gate.results:
        if g.status == "failed":
            assert html.escape(g.message) in page
    assert "Quality gate off" in render_html(hostile_report(gate=False))
    ok = Report(metrics=["faithfulness"], gate=Gate(enabled=True, passed=True, results=[
        GateResult(metric="faithfulness", threshold=0.8, mean=0.9, status="passed", message="faithfulness 0.900 >= 0.80")]),
        summary=[MetricSummary(metric="faithfulness", mean=0.9, scored=1, unscored=0)])
    assert "Quality gate passed" in render_html(ok)


def test_empty_report_and_a_metric_with_no_scored_sample():
    empty = render_html(Report(metrics=[], gate=Gate(enabled=True, passed=True)))
    assert "No samples in this report." in empty and "No metric was computed." in empty
    assert embedded(empty)["samples"] == []
    none_scored = Report(metrics=["context_recall"], gate=Gate(enabled=True, passed=True),
                         summary=[MetricSummary(metric="context_recall", mean=None, scored=0, unscored=1,
                                                unscored_reasons={"no_reference": 1})],
                         samples=[SampleResult(id="s", metrics={"context_recall": MetricResult.unscored_because("no_reference")})])
    page = render_html(none_scored)
    assert "No scored sample: nothing to chart." in page and "<code>no_reference</code>" in page
    assert 'id="sample-table"' in page


def test_unknown_metric_with_unfamiliar_evidence_renders():
    rep = Report(metrics=["my_metric"], gate=Gate(enabled=False, passed=True),
                 summary=[MetricSummary(metric="my_metric", mean=0.4, scored=1, unscored=0)],
                 samples=[SampleResult(id="s", metrics={"my_metric": MetricResult.of(0.4, odd={"k": [1, 2]}, label="x")})])
    page = render_html(rep)
    assert 'id="metric-my_metric"' in page and "0.400" in page
    assert embedded(page)["samples"][0]["metrics"]["my_metric"]["evidence"] == {"odd": {"k": [1, 2]}, "label": "x"}


def test_categories_table_only_when_samples_have_categories(report, page):
    assert 'id="categories"' in page and 'id="f-category"' in page
    plain = Report(metrics=["faithfulness"], gate=Gate(enabled=False, passed=True),
                   summary=[MetricSummary(metric="faithfulness", mean=1.0, scored=1, unscored=0)],
                   samples=[SampleResult(id="s", metrics={"faithfulness": MetricResult.of(1.0)})])
    page2 = render_html(plain)
    assert 'id="categories"' not in page2 and 'id="f-category"' not in page2


def test_run_metadata_and_skipped_rows(report):
    rep = report.model_copy(update={"skipped": [SkippedRow(path="d.jsonl", line=3, field="answer", reason="<missing>")]})
    page = render_html(rep)
    assert "<details" in page and "Run metadata" in page
    assert f"<dd>{rep.meta['judge']['fingerprint']}</dd>" in page
    assert "Skipped input rows (1)" in page and "&lt;missing&gt;" in page


def test_histogram_bins_and_threshold():
    assert bin_counts([0.0, 0.05, 0.1, 0.95, 1.0]) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    svg = histogram_svg("m", [0.2, 0.9], threshold=0.5, mean=0.55, ci=(0.2, 0.9))
    assert svg.count("<rect") == 10 and 'class="threshold"' in svg and "threshold 0.50" in svg
    assert svg.count('class="bar below"') == 5  # the bins wholly below the threshold
    assert 'aria-label="m: 2 scored samples in 10 bins from 0 to 1; 1 below the threshold 0.50">' in svg
    # well-formed: every tag closes, no stray quote after an attribute (it once had `"">`)
    import xml.etree.ElementTree as ET

    assert ET.fromstring(svg).get("aria-label").endswith("threshold 0.50")


def test_write_html_writes_the_rendered_page(tmp_path, report):
    out = tmp_path / "sub" / "report.html"
    write_html(report, out)
    assert out.read_text(encoding="utf-8") == render_html(report)
