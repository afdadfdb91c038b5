"""Pictures: the SVG module (report/svg.py), `calibrate --html` (ROC, reliability, histograms per label, the suggested
threshold), the eval report's histograms with the threshold, and `Report.plot()` (matplotlib, else the install
command)."""
from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from localragas.core.errors import MissingDependencyError
from localragas.quality.curves import reliability_bins, roc_points, wilson
from localragas.report import write_json
from localragas.report.html_report import _asset, _sha256
from localragas.data.report_views import PLOT_COLOURS
from localragas.report.plot_page import FULL_WIDTH, HALF_WIDTH
from localragas.report.svg import STYLE, Plot, histogram, ticks

from calibration_helpers import overlap_rows
from cli_helpers import cli, write_jsonl
from reports_helpers import make_report

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", page, re.S)]


def by_class(svg: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in svg.iter(tag) if e.get("class") == cls]


# --- report/svg.py --------------------------------------------------------------------------------------------------


def test_a_plot_maps_values_onto_its_area_and_escapes_its_text():
    plot = Plot(200, 100, x_range=(-1, 1), y_range=(0, 10), margins=(20, 10, 10, 20))
    assert (plot.x(-1), plot.x(0), plot.x(1)) == (20, 105, 190)
    assert (plot.y(0), plot.y(10)) == (80, 10)
    plot.axes([-1, 0, 1], [0, 10], x_label="<x & y>")
    plot.line([(-1, 0), (1, 10)], band=([0, 5], [2, 10]))
    svg = ET.fromstring(plot.svg('a "plot" <of> things'))
    assert svg.get("aria-label") == 'a "plot" <of> things'
    assert [e.text for e in svg.iter("text")][-1] == "<x & y>"
    assert svg.find("polyline").get("points") == "20,80 190,10"
    assert svg.find("polygon").get("points") == "20,66 190,10 190,45 20,80"  # the band: highs, then lows backwards


def test_ticks_are_round_and_histogram_bins_count_the_last_edge():
    assert ticks(0, 1, 5) == [0, 0.25, 0.5, 0.75, 1]
    assert ticks(-0.12, 0.12, 5) == [-0.1, 0, 0.1]
    assert ticks(0, 37, 5) == [0, 10, 20, 30]
    plot = Plot(100, 100)
    assert histogram(plot, [0.0, 0.05, 0.5, 1.0], bins=4, below=0.5, digits=2) == [2, 0, 1, 1]
    bars = ET.fromstring(plot.svg("h")).findall("rect")
    assert [b.get("class") for b in bars] == ["bar below", "bar below", "bar", "bar"]
    assert [t.text for t in ET.fromstring(plot.svg("h")).iter("title")] == [
        "0.00–0.25): 2 samples", "0.25–0.50): 0 samples", "0.50–0.75): 1 sample", "0.75–1.00]: 1 sample"]


# --- calibrate --html -----------------------------------------------------------------------------------------------


def test_roc_points_and_reliability_bins():
    labels, scores = [0, 0, 1, 1, 1], [0.1, 0.3, 0.3, 0.7, 0.9]
    assert [(p.threshold, p.fpr, p.tpr) for p in roc_points(labels, scores)] == [
        (None, 0, 0), (0.9, 0, 0.333333), (0.7, 0, 0.666667), (0.3, 0.5, 1), (0.1, 1, 1)]
    assert roc_points([1, 1], [0.2, 0.4]) == []  # one class: no curve
    bins = reliability_bins(labels, scores, bins=2)
    assert [(b.rows, b.predicted, b.observed) for b in bins] == [(3, 0.233333, 0.333333), (2, 0.8, 1.0)]
    assert (bins[1].ci_low, bins[1].ci_high) == wilson(2, 2) == (0.342372, 1.0)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory) -> tuple[str, dict]:
    """40 rows the fake judge scores 0.08 .. 0.40 (0.8 x the shared words / 10), labelled good from 0.24."""
    folder = tmp_path_factory.mktemp("calibrate")
    data = write_jsonl(folder / "labelled.jsonl", overlap_rows(40))
    page, out = folder / "calib.html", folder / "calib.json"
    r = cli("calibrate", data, *FAST, "--html", page, "--out", out)
    assert r.exit_code == 0, r.output
    assert f"wrote {out}, {page}" in r.output
    return page.read_text(encoding="utf-8"), json.loads(out.read_text())


def test_calibrate_html_is_offline_and_holds_four_plots(calibrated):
    page, _ = calibrated
    assert "<script" not in page and "default-src 'none'" in page and "http" not in page.split("</head>")[1]
    labels = [s.get("aria-label") for s in svgs(page)]
    assert labels == ["ROC curve of faithfulness against the human labels: AUC 1.000 [1.000, 1.000]",
                      "reliability of faithfulness's scale: 3 score bins against the human labels",
                      "faithfulness scores of the 24 scored rows labelled good (1)",
                      "faithfulness scores of the 16 scored rows labelled bad (0)"]


def test_the_roc_curve_passes_through_each_threshold_and_marks_the_suggested_one(calibrated):
    page, data = calibrated
    roc = svgs(page)[0]
    assert data["results"][0]["agreement"]["suggested_threshold"] == pytest.approx(0.24)
    curve = by_class(roc, "polyline", "line")[0].get("points").split()
    # (0, 0), then the thresholds 0.40, 0.32, 0.24 (every good row passes, no bad one), 0.16, 0.08: x 60..522, y 412..26
    assert curve == ["60,412", "60,283.3", "60,154.7", "60,26", "291,26", "522,26"]
    assert by_class(roc, "polyline", "diagonal")[0].get("points") == "60,412 522,26"
    mark = by_class(roc, "circle", "point suggested")[0]
    assert (mark.get("cx"), mark.get("cy")) == ("60", "26")
    assert mark.find("title").text.startswith("suggested threshold 0.240: 1.000 of the good rows pass, 0.000 of the bad")


def test_the_reliability_diagram_puts_each_bin_at_its_mean_score_and_share_labelled_good(calibrated):
    rel = svgs(calibrated[0])[1]
    points = [float(c.get(k)) for c in by_class(rel, "circle", "point") for k in ("cx", "cy")]
    # bins [0, 0.2): scores 0.08, 0.16, all bad; [0.2, 0.4): 0.24, 0.32, all good; [0.4, 0.6): 0.40, good
    assert points == pytest.approx([60 + 0.12 * 462, 412, 60 + 0.28 * 462, 26, 60 + 0.40 * 462, 26], abs=0.05)
    assert len(rel.findall("polygon")) == 1  # the interval band
    assert "16 rows, mean score 0.120, labelled good 0.000" in [t.text for t in rel.iter("title")][0]


def test_the_histograms_per_label_draw_the_suggested_and_the_gate_threshold(calibrated):
    good, bad = svgs(calibrated[0])[2:]
    assert [t.text for t in good.iter("title") if not t.text.endswith(" 0 rows")] == [
        "0.2–0.3): 8 rows", "0.3–0.4): 8 rows", "0.4–0.5): 8 rows"]
    assert [t.text for t in bad.iter("title") if not t.text.endswith(" 0 rows")] == ["0.0–0.1): 8 rows",
                                                                                    "0.1–0.2): 8 rows"]
    for svg in (good, bad):
        lines = {e.get("class"): e for e in svg.iter("line") if e.get("class") in ("threshold", "grid")}
        assert float(lines["threshold"].get("x1")) == pytest.approx(60 + 0.24 * 462, abs=0.05)
        assert float(lines["grid"].get("x1")) == 60 + 0.5 * 462  # the gate's 0.50
        texts = [t.text for t in svg.iter("text")]
        assert "suggested 0.240" in texts and "gate 0.50" in texts


def test_calibrate_family_refuses_html(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", overlap_rows(4))
    r = cli("calibrate", data, *FAST, "--fit", tmp_path / "fit.json", "--family", "question_answerable",
            "--html", tmp_path / "x.html")
    assert r.exit_code == 2 and "--html does not apply" in r.output


# --- compare --html and calibrate --html: styled as the report, charts the page's width, text 12 px and more -----------

# what a figure gets on a 1,366 px screen: the report's column (style.css: main max 1,240 px, 24 px padding each
# side), less the panel's padding and border (plots.css: 20 px each side, 1 px); a pair side by side, half of it less
# their 16 px gap
SHOWN_FULL = 1240 - 2 * 24 - 2 * 20 - 2 * 1
SHOWN_HALF = (SHOWN_FULL - 16) / 2


@pytest.fixture
def compared(tmp_path) -> str:
    base, new = tmp_path / "b.json", tmp_path / "n.json"
    write_json(make_report({f"s{i}": {"faithfulness": i / 10, "context_recall": 0.5} for i in range(10)}), base)
    write_json(make_report({f"s{i}": {"faithfulness": min(1, i / 10 + 0.2), "context_recall": 0.5}
                            for i in range(10)}), new)
    page = tmp_path / "c.html"
    r = cli("compare", base, new, "--html", page)
    assert r.exit_code == 0, r.output
    return page.read_text(encoding="utf-8")


def _font_sizes(style: str, selector: str) -> list[float]:
    return [float(px) for rule in re.findall(rf"{re.escape(selector)}[^{{]*\{{([^}}]*)\}}", style)
            for px in re.findall(r"(\d+(?:\.\d+)?)px", rule)]


@pytest.mark.parametrize("which", ["compare", "calibrate"])
def test_compare_and_calibrate_pages_are_styled_as_the_report_is(which, compared, calibrated):
    page = compared if which == "compare" else calibrated[0]
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert style.startswith(_asset("style.css"))  # the HTML report's stylesheet, inline, as the report has it
    assert _asset("plots.css") in style and STYLE in style
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert csp == f"default-src 'none'; style-src '{_sha256(style)}'; base-uri 'none'; form-action 'none'"
    body = page.split("</head>")[1]
    assert '<header class="top">' in body and "<main>" in body and '<section class="panel' in body
    assert '<div class="table-wrap">' in body and '<table class="data">' in body  # the report's tables


def test_compare_and_calibrate_charts_fill_the_width_with_text_of_12_px_and_more(compared, calibrated):
    plots_css = _asset("plots.css")
    assert "figure svg.plot { width: 100%; height: auto; max-width: 100%; }" in plots_css  # as wide as the page
    assert ".figures.pairs { grid-template-columns: repeat(2, minmax(0, 1fr)); }" in plots_css
    for selector in ("svg.plot .tick", "svg.plot .label", "svg.plot .grid-label", "svg.plot .threshold-label"):
        sizes = _font_sizes(STYLE, selector)
        assert sizes and min(sizes) >= 12, (selector, sizes)
    # each drawing is made at most as wide as it is shown on a 1,366 px screen: its text is not scaled down
    assert FULL_WIDTH <= SHOWN_FULL and HALF_WIDTH <= SHOWN_HALF
    assert FULL_WIDTH >= 0.9 * SHOWN_FULL and HALF_WIDTH >= 0.9 * SHOWN_HALF  # nor much up
    [differences] = svgs(compared)
    assert differences.get("viewBox").split()[2] == str(FULL_WIDTH)
    assert re.search(r'<div class="figures">\s*<figure><svg class="plot"', compared)  # alone in its row
    calibration = svgs(calibrated[0])
    assert [s.get("viewBox").split()[2] for s in calibration] == [str(HALF_WIDTH)] * 4
    assert calibrated[0].count('<div class="figures pairs">') == 1  # two a row


# --- the eval report's histograms -----------------------------------------------------------------------------------


def test_the_eval_report_draws_each_metrics_scores_with_its_threshold(tmp_path):
    page_path, out = tmp_path / "r.html", tmp_path / "r.json"
    cli("eval", EXAMPLE, *FAST, "--html", page_path, "--out", out)
    report = json.loads(out.read_text())
    hists = [s for s in svgs(page_path.read_text()) if s.get("class") == "hist"]
    assert len(hists) == len(report["metrics"])
    for svg, summary, gate in zip(hists, report["summary"], report["gate"]["results"]):
        counts = [int(t.text.rsplit(": ", 1)[1].split()[0]) for t in svg.iter("title") if ": " in t.text
                  and t.text.endswith(("sample", "samples"))]
        assert sum(counts) == summary["scored"]
        line = by_class(svg, "line", "threshold")[0]
        assert float(line.get("x1")) == pytest.approx(24 + gate["threshold"] * 228, abs=0.05)


# --- Report.plot() --------------------------------------------------------------------------------------------------


def test_report_plot_without_matplotlib_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails as if not installed
    with pytest.raises(MissingDependencyError, match=r"pip install matplotlib"):
        make_report({"a": {"faithfulness": 0.5}}).plot()


def test_report_plot_draws_each_metrics_histogram_and_threshold():
    pytest.importorskip("matplotlib")
    report = make_report({f"s{i}": {"faithfulness": (i + 0.5) / 10, "context_recall": 0.9} for i in range(10)},
                         thresholds={"faithfulness": 0.7, "context_recall": 0.5})
    fig = report.plot()
    assert [ax.get_title() for ax in fig.axes] == ["faithfulness", "context_recall"]
    assert [p.get_height() for p in fig.axes[0].patches] == [1] * 10
    assert [line.get_xdata()[0] for line in fig.axes[0].lines if line.get_linestyle() == "--"] == [0.7]
    assert [ax.get_title() for ax in report.plot(["context_recall"]).axes] == ["context_recall"]


def test_report_plot_colours_each_metric_by_its_gate_and_keeps_its_legend_off_the_bars():
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_hex

    report = make_report({f"s{i}": {"faithfulness": (i + 0.5) / 10, "context_recall": 0.9, "answer_relevancy": 0.2}
                          for i in range(10)}, thresholds={"faithfulness": 0.7, "context_recall": 0.5})
    fig = report.plot()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays it out and draws it
    colours = {ax.get_title(): ({to_hex(p.get_facecolor(), keep_alpha=False) for p in ax.patches},
                                to_hex(ax.title.get_color())) for ax in fig.axes}
    assert colours == {"faithfulness": ({PLOT_COLOURS["failed"]}, PLOT_COLOURS["failed"]),  # mean 0.5 < 0.7
                       "context_recall": ({PLOT_COLOURS["passed"]}, PLOT_COLOURS["passed"]),
                       "answer_relevancy": ({PLOT_COLOURS[None]}, PLOT_COLOURS[None])}  # no threshold: not gated
    assert PLOT_COLOURS["failed"] != PLOT_COLOURS["passed"] != PLOT_COLOURS[None]
    texts = {ax.get_title(): [t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes}
    assert texts["faithfulness"] == ["threshold 0.70: FAILED", "mean 0.500, 95% CI " + texts["faithfulness"][1]
                                     .split("95% CI ")[1]]
    assert texts["context_recall"][0] == "threshold 0.50: passed"
    renderer = canvas.get_renderer()
    whole = fig.bbox
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0]
        assert not any(legend.overlaps(b) for b in bars)  # the legend covers no bar
        assert not legend.overlaps(ax.get_window_extent(renderer))  # below the panel
        assert whole.x0 <= legend.x0 and legend.x1 <= whole.x1 and whole.y0 <= legend.y0  # inside the figure
