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
from localragas.report.svg import Plot, histogram, ticks

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
    # (0, 0), then the thresholds 0.40, 0.32, 0.24 (every good row passes, no bad one), 0.16, 0.08: x 46..306, y 260..22
    assert curve == ["46,260", "46,180.7", "46,101.3", "46,22", "176,22", "306,22"]
    assert by_class(roc, "polyline", "diagonal")[0].get("points") == "46,260 306,22"
    mark = by_class(roc, "circle", "point suggested")[0]
    assert (mark.get("cx"), mark.get("cy")) == ("46", "22")
    assert mark.find("title").text.startswith("suggested threshold 0.240: 1.000 of the good rows pass, 0.000 of the bad")


def test_the_reliability_diagram_puts_each_bin_at_its_mean_score_and_share_labelled_good(calibrated):
    rel = svgs(calibrated[0])[1]
    points = [float(c.get(k)) for c in by_class(rel, "circle", "point") for k in ("cx", "cy")]
    # bins [0, 0.2): scores 0.08, 0.16, all bad; [0.2, 0.4): 0.24, 0.32, all good; [0.4, 0.6): 0.40, good
    assert points == pytest.approx([46 + 0.12 * 260, 260, 46 + 0.28 * 260, 22, 46 + 0.40 * 260, 22])
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
        assert float(lines["threshold"].get("x1")) == pytest.approx(46 + 0.24 * 260, abs=0.05)
        assert float(lines["grid"].get("x1")) == 46 + 0.5 * 260  # the gate's 0.50
        texts = [t.text for t in svg.iter("text")]
        assert "suggested 0.240" in texts and "gate 0.50" in texts


def test_calibrate_family_refuses_html(tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", overlap_rows(4))
    r = cli("calibrate", data, *FAST, "--fit", tmp_path / "fit.json", "--family", "question_answerable",
            "--html", tmp_path / "x.html")
    assert r.exit_code == 2 and "--html does not apply" in r.output


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
