"""Inline SVG plots of the run dashboard (report/dashboard.py): a metric's mean over a dataset's runs with its
interval as a band and the gate threshold drawn in, and a comparison's paired differences with their intervals."""
from __future__ import annotations

from html import escape
from typing import Sequence

from ..core.number_text import interval_text, score_text, threshold_text
from ..quality.compare import MetricChange
from ..run.history import RunRecord

_W, _H = 420, 170
_LEFT, _RIGHT, _TOP, _BOTTOM = 34, 10, 12, 138  # plot area: x from _LEFT to _W - _RIGHT, y from _TOP to _BOTTOM


def _y(v: float) -> float:
    return round(_BOTTOM - max(0.0, min(1.0, v)) * (_BOTTOM - _TOP), 1)


def _xs(n: int) -> list[float]:
    if n == 1:
        return [round((_LEFT + _W - _RIGHT) / 2, 1)]
    step = (_W - _LEFT - _RIGHT) / (n - 1)
    return [round(_LEFT + i * step, 1) for i in range(n)]


def trend_svg(metric: str, runs: Sequence[RunRecord]) -> str:
    """The metric's mean in each run (oldest first) as a line with points, its interval as a band, the run's gate
    threshold as a dashed line (a step where it changed). An accessible role=img with a description; each point has
    a tooltip: run id, when, mean and interval."""
    points = [(r, m) for r in runs if (m := r.metric(metric)) is not None]
    xs = _xs(len(points))
    means = [(x, m.mean) for x, (_, m) in zip(xs, points) if m.mean is not None]
    desc = f"{metric} over {len(points)} run(s)"
    if means:
        desc += f": first {score_text(means[0][1])}, last {score_text(means[-1][1])}"
    parts = [f'<svg class="trend" viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(desc)}">']
    for v in (0, 0.5, 1):
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_y(v)}" y2="{_y(v)}"/>'
                     f'<text class="tick" x="{_LEFT - 4}" y="{_y(v) + 4}" text-anchor="end">{v:g}</text>')
    band = [(x, m.ci_low, m.ci_high) for x, (_, m) in zip(xs, points) if m.ci_low is not None and m.ci_high is not None]
    if len(band) > 1:
        edge = [f"{x},{_y(hi)}" for x, _, hi in band] + [f"{x},{_y(lo)}" for x, lo, _ in reversed(band)]
        parts.append(f'<polygon class="band" points="{" ".join(edge)}"><title>95% interval of the mean</title>'
                     '</polygon>')
    elif band:
        x, lo, hi = band[0]
        parts.append(f'<line class="ci" x1="{x}" x2="{x}" y1="{_y(lo)}" y2="{_y(hi)}"/>')
    limits = [(x, m.threshold) for x, (_, m) in zip(xs, points) if m.threshold is not None]
    if limits:
        half = (xs[1] - xs[0]) / 2 if len(xs) > 1 else (_W - _LEFT - _RIGHT) / 2
        steps = " ".join(f"{max(_LEFT, round(x - half, 1))},{_y(t)} {min(_W - _RIGHT, round(x + half, 1))},{_y(t)}"
                         for x, t in limits)
        shown = ", ".join(dict.fromkeys(threshold_text(t) for _, t in limits))
        parts.append(f'<polyline class="threshold" points="{steps}"><title>gate threshold {escape(shown)}</title>'
                     '</polyline>')
    if len(means) > 1:
        parts.append(f'<polyline class="line" points="{" ".join(f"{x},{_y(v)}" for x, v in means)}"/>')
    for x, (run, m) in zip(xs, points):
        if m.mean is None:
            continue
        tip = f"run {run.id} · {run.started} · {metric} {score_text(m.mean)}"
        if m.ci_low is not None and m.ci_high is not None:
            tip += f" (95% CI {interval_text(m.ci_low, m.ci_high)})"
        cls = "point failed" if m.status == "failed" else "point"
        parts.append(f'<circle class="{cls}" cx="{x}" cy="{_y(m.mean)}" r="3.5"><title>{escape(tip)}</title>'
                     '</circle>')
    if points:
        parts.append(f'<text class="tick" x="{xs[0]}" y="{_H - 14}" text-anchor="middle">#{points[0][0].id}</text>')
        if len(points) > 1:
            parts.append(f'<text class="tick" x="{xs[-1]}" y="{_H - 14}" text-anchor="middle">'
                         f'#{points[-1][0].id}</text>')
    parts.append("</svg>")
    return "".join(parts)


_FW, _ROW, _FLEFT = 420, 26, 150


def differences_svg(changes: Sequence[MetricChange]) -> str:
    """Each metric's paired difference (new - base) as a point with its interval, around a zero line, on [-1, 1]
    (clipped): a change whose interval misses zero is a real one (quality/compare.py verdict_of)."""
    height = 28 + _ROW * len(changes)
    span = _FW - _FLEFT - 12

    def x(v: float) -> float:
        return round(_FLEFT + (max(-1.0, min(1.0, v)) + 1) / 2 * span, 1)

    desc = "paired differences: " + "; ".join(f"{c.metric} {score_text(c.diff, signed=True)} ({c.verdict})"
                                              for c in changes)
    parts = [f'<svg class="diffs" viewBox="0 0 {_FW} {height}" role="img" aria-label="{escape(desc)}">',
             f'<line class="zero" x1="{x(0)}" x2="{x(0)}" y1="4" y2="{height - 20}"/>']
    for v in (-1, -0.5, 0, 0.5, 1):
        parts.append(f'<text class="tick" x="{x(v)}" y="{height - 6}" text-anchor="middle">{v:+g}</text>')
    for i, c in enumerate(changes):
        y = 16 + i * _ROW
        parts.append(f'<text class="label" x="{_FLEFT - 8}" y="{y + 4}" text-anchor="end">{escape(c.metric)}</text>')
        if c.ci_low is not None and c.ci_high is not None:
            parts.append(f'<line class="ci {c.verdict}" x1="{x(c.ci_low)}" x2="{x(c.ci_high)}" y1="{y}" y2="{y}"/>')
        if c.diff is not None:
            tip = f"{c.metric}: {score_text(c.diff, signed=True)}"
            if c.ci_low is not None and c.ci_high is not None:
                tip += f" (95% CI {interval_text(c.ci_low, c.ci_high, form='ellipsis', signed=True)})"
            parts.append(f'<circle class="diff {c.verdict}" cx="{x(c.diff)}" cy="{y}" r="4">'
                         f'<title>{escape(tip + ", " + c.verdict.replace("_", " "))}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)
