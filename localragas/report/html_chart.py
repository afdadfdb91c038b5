"""Inline SVG score histogram for the HTML report: 10 bins over [0, 1], the threshold, the mean and its 95% CI
(drawn with report/svg.py)."""
from __future__ import annotations

from ..core.number_text import interval_text, score_text, threshold_text
from .svg import Plot, bin_counts as _bins, histogram

BINS = 10


def bin_counts(values: list[float], bins: int = BINS) -> list[int]:
    """How many values fall in each of `bins` equal bins over [0, 1]; 1.0 counts in the last bin."""
    return _bins(values, bins)


def histogram_svg(metric: str, values: list[float], threshold: float | None = None, mean: float | None = None,
                  ci: tuple[float, float] | None = None) -> str:
    """An accessible SVG histogram (role=img with a text description; each bar has a tooltip)."""
    plot = Plot(260, 140, margins=(24, 8, 22, 40))
    plot.add(f'<line class="grid" x1="{plot.left}" x2="{plot.right}" y1="{plot.top}" y2="{plot.top}"/>')
    plot.text(plot.left - 4, plot.top + 4, str(max(bin_counts(values)) or 1), anchor="end")
    plot.text(plot.left - 4, plot.bottom, "0", anchor="end")
    histogram(plot, values, BINS, below=threshold)
    plot.hline(0, cls="axis")
    y = plot.bottom + 10  # the mean and its interval, under the axis
    if ci is not None and mean is not None:
        plot.add(f'<line class="ci" x1="{plot.x(ci[0]):.1f}" x2="{plot.x(ci[1]):.1f}" y1="{y}" y2="{y}">'
                 f'<title>95% CI {interval_text(*ci)}</title></line>')
    if mean is not None:
        plot.add(f'<circle class="mean" cx="{plot.x(mean):.1f}" cy="{y}" r="3.5"><title>mean {score_text(mean)}</title>'
                 '</circle>')
    for v in (0, 0.5, 1):
        plot.text(plot.x(v), plot.height - 8, f"{v:g}")
    if threshold is not None:
        plot.vline(threshold, cls="threshold", label=f"threshold {threshold_text(threshold)}")
    desc = f"{metric}: {len(values)} scored samples in {BINS} bins from 0 to 1"
    if threshold is not None:
        below = sum(1 for v in values if v < threshold)
        desc += f"; {below} below the threshold {threshold_text(threshold)}"
    return plot.svg(desc, cls="hist")
