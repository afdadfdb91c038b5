"""The run dashboard's trend (report/dashboard.py): a metric's mean over a dataset's runs with its interval as a
band and the gate threshold drawn in, through report/svg.py's Plot. (Its paired differences are compare --html's,
report/comparison_html.py.)"""
from __future__ import annotations

from typing import Sequence

from ..core.number_text import interval_text, score_text, threshold_text
from ..run.history import RunRecord
from .svg import Plot

_W, _H = 420, 170
_MARGINS = (34, 10, 12, 32)  # left, right, top, bottom: the plot from x 34 to 410, y 12 to 138


def _clip(v: float) -> float:
    return max(0.0, min(1.0, v))


def trend_svg(metric: str, runs: Sequence[RunRecord]) -> str:
    """The metric's mean in each run (oldest first) as a line with points, its interval as a band, the run's gate
    threshold as a dashed line (a step where it changed). An accessible role=img with a description; each point has
    a tooltip: run id, when, mean and interval."""
    points = [(r, m) for r in runs if (m := r.metric(metric)) is not None]
    n = len(points)
    plot = Plot(_W, _H, x_range=(0.0, float(n - 1)) if n > 1 else (-1.0, 1.0), margins=_MARGINS)
    means = [(i, m.mean) for i, (_, m) in enumerate(points) if m.mean is not None]
    desc = f"{metric} over {n} run(s)"
    if means:
        desc += f": first {score_text(means[0][1])}, last {score_text(means[-1][1])}"
    for v in (0, 0.5, 1):
        plot.hline(v, cls="grid")
        plot.text(plot.left - 4, plot.y(v) + 4, f"{v:g}", anchor="end")
    band = [(i, _clip(m.ci_low), _clip(m.ci_high)) for i, (_, m) in enumerate(points)
            if m.ci_low is not None and m.ci_high is not None]
    if len(band) > 1:
        plot.band([i for i, _, _ in band], [lo for _, lo, _ in band], [hi for _, _, hi in band],
                  tip="95% interval of the mean")
    elif band:
        i, lo, hi = band[0]
        plot.segment((i, lo), (i, hi), cls="ci")
    limits = [(i, m.threshold) for i, (_, m) in enumerate(points) if m.threshold is not None]
    if limits:
        lo, hi = plot.x_range
        half = 0.5 if n > 1 else 1.0
        steps = [p for i, t in limits for p in ((max(lo, i - half), _clip(t)), (min(hi, i + half), _clip(t)))]
        shown = ", ".join(dict.fromkeys(threshold_text(t) for _, t in limits))
        plot.line(steps, cls="threshold", tip=f"gate threshold {shown}")
    if len(means) > 1:
        plot.line([(i, _clip(v)) for i, v in means], cls="line")
    for i, (run, m) in enumerate(points):
        if m.mean is None:
            continue
        tip = f"run {run.id} · {run.started} · {metric} {score_text(m.mean)}"
        if m.ci_low is not None and m.ci_high is not None:
            tip += f" (95% CI {interval_text(m.ci_low, m.ci_high)})"
        plot.point(i, _clip(m.mean), cls="point failed" if m.status == "failed" else "point", tip=tip)
    for i in sorted({0, n - 1}) if n else ():
        plot.text(plot.x(i), _H - 14, f"#{points[i][0].id}")
    return plot.svg(desc, cls="trend")
