"""`calibrate --html`: what calibrate measured as a self-contained page (report/plot_page.py), per result: binary
labels the ROC curve with the suggested threshold marked, the reliability diagram of the scale (the share labelled
good per score bin against the diagonal, with its interval) and the scores' histogram per human label with the
suggested and the gate threshold; graded labels the reliability diagram (the mean label per bin) and the scores'
histogram; then the figures' table."""
from __future__ import annotations

from ..core.number_text import count_text, score_text, threshold_text
from ..quality.calibration_results import (Calibration, CalibrationRun, calibration_source, figure_text,
                                           measure_label, rows_text, suggested_text, unscored_text)
from ..quality.curves import reliability_bins, roc_points
from .plot_page import HALF_WIDTH, Section, render_page
from .svg import Plot, histogram

_UNIT = [0.0, 0.25, 0.5, 0.75, 1.0]


def _square() -> Plot:
    return Plot(HALF_WIDTH, 460, margins=(60, 18, 26, 48))


def roc_svg(c: Calibration, labels: list[float], scores: list[float]) -> str:
    """The ROC curve, the chance diagonal, and the point of the suggested threshold."""
    plot = _square()
    plot.axes(_UNIT, _UNIT, "bad rows passed (false positive rate)", "good rows passed (true positive rate)")
    plot.line([(0, 0), (1, 1)], cls="diagonal")
    points = roc_points(labels, scores)
    auc = c.agreement.measures.get("roc_auc")
    plot.line([(p.fpr, p.tpr) for p in points], tip=f"ROC AUC {figure_text(auc)}")
    t = c.agreement.suggested_threshold
    for p in points:
        if t is not None and p.threshold == t:
            plot.point(p.fpr, p.tpr, cls="point suggested", r=5,
                       tip=f"suggested threshold {score_text(t)}: {score_text(p.tpr)} of the good rows pass, "
                           f"{score_text(p.fpr)} of the bad rows")
    return plot.svg(f"ROC curve of {c.metric} against the human labels: AUC {figure_text(auc)}")


def reliability_svg(c: Calibration, labels: list[float], scores: list[float]) -> str:
    """Each score bin's mean score against the share of its rows labelled good (graded: their mean label), with its
    interval as a band; a calibrated scale lies on the diagonal."""
    binary = c.kind == "binary"
    plot = _square()
    plot.axes(_UNIT, _UNIT, f"{c.metric} score (bin mean)", "share labelled good" if binary else "mean human label")
    plot.line([(0, 0), (1, 1)], cls="diagonal")
    filled = [b for b in reliability_bins(labels, scores, binary=binary) if b.rows]
    xy = [(b.predicted or 0.0, b.observed or 0.0) for b in filled]
    band = ([b.ci_low or 0.0 for b in filled], [b.ci_high or 0.0 for b in filled]) if binary else None
    plot.line(xy, band=band)
    for b, (x, y) in zip(filled, xy):
        plot.point(x, y, tip=f"scores {b.low:g}–{b.high:g}: {count_text(b.rows, 'row')}, mean score {score_text(x)}, "
                             f"{'labelled good' if binary else 'mean label'} {score_text(y)}")
    return plot.svg(f"reliability of {c.metric}'s scale: {len(filled)} score bins against the human labels")


def label_histogram_svg(c: Calibration, scores: list[float], label: str) -> str:
    """The scores of the rows with one human label, the suggested and the gate threshold drawn."""
    plot = Plot(HALF_WIDTH, 230, margins=(60, 18, 40, 44))
    counts = histogram(plot, scores, 10, noun="row")
    top = max(counts) or 1
    plot.axes(_UNIT, [0, top], f"{c.metric} score, rows labelled {label}", "rows", fmt=lambda v: f"{v:g}")
    a = c.agreement
    if a.gate_threshold is not None and a.gate_threshold != a.suggested_threshold:
        plot.vline(a.gate_threshold, cls="grid", label=f"gate {threshold_text(a.gate_threshold)}", lift=12)
    if a.suggested_threshold is not None:
        plot.vline(a.suggested_threshold, cls="threshold", label=f"suggested {score_text(a.suggested_threshold)}")
    return plot.svg(f"{c.metric} scores of the {len(scores)} scored rows labelled {label}")


def _section(c: Calibration) -> Section:
    rows = [r for r in c.per_row if r.score is not None]
    labels, scores = [r.label for r in rows], [float(r.score) for r in rows if r.score is not None]
    notes = [f"rows {rows_text(c)}, scored {c.scored}, unscored {unscored_text(c)}"]
    figures: list[tuple[str, str]] = []
    if c.kind == "binary":
        notes.append(f"suggested threshold: {suggested_text(c)} (Youden's J over the scored rows; check it on rows "
                     "kept aside)")
        figures.append((roc_svg(c, labels, scores), "ROC curve: each point one threshold; the marked point, the "
                                                    "suggested one; the diagonal, chance."))
        figures.append((reliability_svg(c, labels, scores), "Reliability: on the diagonal, a score of 0.7 means 70% "
                                                            "of such rows are good; the band, each bin's interval."))
        for name, keep in (("good (1)", lambda y: y >= 0.5), ("bad (0)", lambda y: y < 0.5)):
            mine = [s for y, s in zip(labels, scores) if keep(y)]
            figures.append((label_histogram_svg(c, mine, name), ""))
    elif c.kind == "graded":
        figures.append((reliability_svg(c, labels, scores), "Reliability: each score bin's mean score against its "
                                                            "rows' mean human label; the diagonal, agreement."))
        figures.append((label_histogram_svg(c, scores, "any value"), ""))
    else:
        notes.append("pairwise labels: no plot (the share of pairs ordered as the humans did is in the table)")
    if c.calibrated is not None:
        notes.append("scores through the judge's calibration map" if c.calibrated else "raw P(yes): uncalibrated")
    table = [["figure", "over the scored rows", "unscored rows counted wrong"]]
    table += [[measure_label(name), figure_text(e), figure_text(c.agreement.counted_wrong.get(name))]
              for name, e in c.agreement.measures.items()]
    return Section(heading=f"{c.file}: {c.metric} ({c.kind} labels)", notes=notes + list(c.notes), figures=figures,
                   table=table)


def render_calibration_html(run: CalibrationRun) -> str:
    judge = (run.meta.get("judge") or {}).get("name", "?")
    return render_page("localragas calibrate", [_section(c) for c in run.results],
                       facts=[f"judge {judge}", f"calibration: {calibration_source(run.meta)}"])
