"""Inline SVG score histogram for the HTML report: 10 bins over [0, 1], the threshold, the mean and its 95% CI."""
from __future__ import annotations

from html import escape

from ..core.number_text import count_text, interval_text, score_text, threshold_text

BINS = 10
_W, _H = 260, 140
_LEFT, _RIGHT, _TOP, _AXIS = 24, 8, 22, 100  # plot area: x from _LEFT to _W - _RIGHT, bars from _TOP to _AXIS


def bin_counts(values: list[float], bins: int = BINS) -> list[int]:
    """How many values fall in each of `bins` equal bins over [0, 1]; 1.0 counts in the last bin."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    return counts


def _x(v: float) -> float:
    return round(_LEFT + v * (_W - _LEFT - _RIGHT), 1)


def histogram_svg(metric: str, values: list[float], threshold: float | None = None, mean: float | None = None,
                  ci: tuple[float, float] | None = None) -> str:
    """An accessible SVG histogram (role=img with a text description; each bar has a tooltip)."""
    counts = bin_counts(values)
    top = max(counts) or 1
    width = (_W - _LEFT - _RIGHT) / BINS
    below = sum(1 for v in values if threshold is not None and v < threshold)
    desc = f"{metric}: {len(values)} scored samples in {BINS} bins from 0 to 1"
    if threshold is not None:
        desc += f"; {below} below the threshold {threshold_text(threshold)}"
    parts = [f'<svg class="hist" viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(desc)}">']
    parts.append(f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_TOP}" y2="{_TOP}"/>')
    parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end">{top}</text>')
    parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{_AXIS}" text-anchor="end">0</text>')
    for i, n in enumerate(counts):
        lo, hi = i / BINS, (i + 1) / BINS
        h = round((_AXIS - _TOP) * n / top, 1)
        x = round(_LEFT + i * width + 1.5, 1)
        cls = "bar below" if threshold is not None and hi <= threshold else "bar"
        tip = f"{lo:.1f}–{hi:.1f}{']' if i == BINS - 1 else ')'}: {count_text(n, 'sample')}"
        parts.append(f'<rect class="{cls}" x="{x}" y="{_AXIS - h}" width="{round(width - 3, 1)}" height="{h}">'
                     f'<title>{escape(tip)}</title></rect>')
    parts.append(f'<line class="axis" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_AXIS}" y2="{_AXIS}"/>')
    if ci is not None and mean is not None:
        y = _AXIS + 10
        parts.append(f'<line class="ci" x1="{_x(ci[0])}" x2="{_x(ci[1])}" y1="{y}" y2="{y}">'
                     f'<title>95% CI {interval_text(*ci)}</title></line>')
    if mean is not None:
        parts.append(f'<circle class="mean" cx="{_x(mean)}" cy="{_AXIS + 10}" r="3.5">'
                     f'<title>mean {score_text(mean)}</title></circle>')
    for v in (0, 0.5, 1):
        parts.append(f'<text class="tick" x="{_x(v)}" y="{_H - 8}" text-anchor="middle">{v:g}</text>')
    if threshold is not None:
        x = _x(threshold)
        anchor, dx = ("end", -4) if threshold > 0.6 else ("start", 4)
        parts.append(f'<line class="threshold" x1="{x}" x2="{x}" y1="{_TOP - 12}" y2="{_AXIS + 4}"/>')
        parts.append(f'<text class="threshold-label" x="{x + dx}" y="{_TOP - 6}" text-anchor="{anchor}">'
                     f'threshold {threshold_text(threshold)}</text>')
    parts.append("</svg>")
    return "".join(parts)
