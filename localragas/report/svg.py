"""Plots drawn as inline SVG, by hand: no library, nothing fetched, text escaped. One `Plot` is an area with its x
and y ranges; its methods add axes, lines (with a band), bars, histograms, intervals and marks, each element with a
class (styled by the page: `STYLE`, or the report's style.css) and a tooltip. Used by the HTML report's histograms
(html_chart.py), `compare --html` and `calibrate --html` (plot_page.py), and `localragas view`'s trends
(dashboard_svg.py) and paired differences (comparison_html.py's, as `compare --html` draws them)."""
from __future__ import annotations

from html import escape
from typing import Sequence

Point = tuple[float, float]

# the classes' look, for a page that has no style of its own for them (currentColor: the page's text colour); text at
# 12 px and more in the drawing's units, drawn at about the width it is shown at (plot_page.py FULL_WIDTH)
STYLE = """
svg.plot { display: block; max-width: 100%; height: auto; color: inherit; }
svg.plot .axis { stroke: currentColor; stroke-width: 1; }
svg.plot .grid, svg.plot .diagonal { stroke: currentColor; stroke-opacity: 0.25; stroke-dasharray: 3 3; }
svg.plot .zero { stroke: currentColor; stroke-width: 1.2; }
svg.plot .tick, svg.plot .label { fill: currentColor; font: 12px system-ui, sans-serif; }
svg.plot .label { font-size: 13px; }
svg.plot .line { fill: none; stroke: #2f6fb3; stroke-width: 2; }
svg.plot .band { fill: #2f6fb3; fill-opacity: 0.18; stroke: none; }
svg.plot .bar { fill: #2f6fb3; fill-opacity: 0.75; }
svg.plot .bar.second { fill: #d0603a; fill-opacity: 0.6; }
svg.plot .interval { stroke: currentColor; stroke-width: 2.5; stroke-linecap: round; }
svg.plot .point { fill: #2f6fb3; stroke: white; stroke-width: 1; }
svg.plot .threshold { stroke: #b3261e; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg.plot .grid-label, svg.plot .zero-label { fill: currentColor; font: 12px system-ui, sans-serif; }
svg.plot .threshold-label { fill: #b3261e; font: 600 12px system-ui, sans-serif; }
svg.plot .point.suggested { fill: #b3261e; }
svg.plot .improved { stroke: #1d7a36; fill: #1d7a36; }
svg.plot .regressed { stroke: #b3261e; fill: #b3261e; }
svg.plot .not_comparable { stroke: #9a6700; fill: #9a6700; stroke-dasharray: 3 3; }
"""


def _n(v: float) -> str:
    return f"{round(v, 1):g}"


def _title(tip: str | None) -> str:
    return f"<title>{escape(tip)}</title>" if tip else ""


def _close(tag: str, tip: str | None) -> str:
    """The end of an element: its tooltip and end tag, or `/>` without one."""
    return f">{_title(tip)}</{tag}>" if tip else "/>"


def ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round values from lo to hi (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count - 1)
    import math  # noqa: PLC0415

    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    first = math.ceil(lo / step - 1e-9) * step
    out, v = [], first
    while v <= hi + 1e-9:
        out.append(round(v, 10) + 0.0)
        v += step
    return out


def bin_counts(values: Sequence[float], bins: int, lo: float = 0.0, hi: float = 1.0) -> list[int]:
    """How many values fall in each of `bins` equal bins over [lo, hi]; hi counts in the last bin."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int((v - lo) / (hi - lo) * bins)))] += 1
    return counts


class Plot:
    """A drawing area of width x height pixels, the plot inside the margins (left, right, top, bottom), mapping
    x in x_range and y in y_range onto it (y up)."""

    def __init__(self, width: int, height: int, x_range: tuple[float, float] = (0.0, 1.0),
                 y_range: tuple[float, float] = (0.0, 1.0), margins: tuple[int, int, int, int] = (40, 12, 22, 34)):
        self.width, self.height = width, height
        self.x_range, self.y_range = x_range, y_range
        self.left, self.right = margins[0], width - margins[1]
        self.top, self.bottom = margins[2], height - margins[3]
        self.parts: list[str] = []

    def x(self, v: float) -> float:
        lo, hi = self.x_range
        return self.left + (v - lo) / ((hi - lo) or 1) * (self.right - self.left)

    def y(self, v: float) -> float:
        lo, hi = self.y_range
        return self.bottom - (v - lo) / ((hi - lo) or 1) * (self.bottom - self.top)

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def hline(self, v: float, cls: str = "grid", tip: str | None = None) -> None:
        y = _n(self.y(v))
        self.add(f'<line class="{cls}" x1="{_n(self.left)}" x2="{_n(self.right)}" y1="{y}" y2="{y}"{_close("line", tip)}')

    def vline(self, v: float, cls: str = "grid", tip: str | None = None, label: str | None = None,
              lift: float = 0) -> None:
        """A vertical line at x = v over the plot's height (a threshold, zero), with a label at its top (`lift`
        pixels higher: a second label clear of the first)."""
        x = self.x(v)
        self.add(f'<line class="{cls}" x1="{_n(x)}" x2="{_n(x)}" y1="{_n(self.top - 12)}" y2="{_n(self.bottom + 4)}"'
                 + _close("line", tip))
        if label:  # above the plot (the top margin holds it), on the side with more room
            end = x > self.left + 0.6 * (self.right - self.left)
            self.text(x + (-4 if end else 4), self.top - 6 - lift, label, cls=f"{cls}-label", anchor="end" if end else "start")

    def text(self, x: float, y: float, text: str, cls: str = "tick", anchor: str = "middle") -> None:
        self.add(f'<text class="{cls}" x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}">{escape(text)}</text>')

    def axes(self, x_ticks: Sequence[float] = (), y_ticks: Sequence[float] = (), x_label: str = "",
             y_label: str = "", fmt=lambda v: f"{v:g}") -> None:
        """The x axis along the bottom and the y axis along the left, their ticks' values and their names."""
        self.add(f'<line class="axis" x1="{_n(self.left)}" x2="{_n(self.right)}" y1="{_n(self.bottom)}" '
                 f'y2="{_n(self.bottom)}"/>')
        self.add(f'<line class="axis" x1="{_n(self.left)}" x2="{_n(self.left)}" y1="{_n(self.top)}" '
                 f'y2="{_n(self.bottom)}"/>')
        for v in x_ticks:
            self.text(self.x(v), self.bottom + 16, fmt(v))
        for v in y_ticks:
            self.text(self.left - 4, self.y(v) + 4, fmt(v), anchor="end")
        if x_label:
            self.text((self.left + self.right) / 2, self.height - 4, x_label, cls="label")
        if y_label:
            cx, cy = 14, (self.top + self.bottom) / 2
            self.add(f'<text class="label" x="{cx}" y="{_n(cy)}" text-anchor="middle" '
                     f'transform="rotate(-90 {cx} {_n(cy)})">{escape(y_label)}</text>')

    def line(self, points: Sequence[Point], cls: str = "line", tip: str | None = None,
             band: tuple[Sequence[float], Sequence[float]] | None = None) -> None:
        """A line through the points; with band (low, high values at the same x), the band drawn beneath it."""
        if band is not None:
            self.band([x for x, _ in points], *band)
        self.add(f'<polyline class="{cls}" points="{self._points(points)}">{_title(tip)}</polyline>')

    def band(self, xs: Sequence[float], lows: Sequence[float], highs: Sequence[float], tip: str | None = None) -> None:
        """The area between the lows and the highs at the same xs (an interval over a line)."""
        ring = [*zip(xs, highs), *reversed(list(zip(xs, lows)))]
        self.add(f'<polygon class="band" points="{self._points(ring)}"' + _close("polygon", tip))

    def segment(self, start: Point, end: Point, cls: str, tip: str | None = None) -> None:
        """A straight line from start to end (in the plot's values)."""
        self.add(f'<line class="{cls}" x1="{_n(self.x(start[0]))}" x2="{_n(self.x(end[0]))}" '
                 f'y1="{_n(self.y(start[1]))}" y2="{_n(self.y(end[1]))}"' + _close("line", tip))

    def _points(self, points: Sequence[Point]) -> str:
        return " ".join(f"{_n(self.x(x))},{_n(self.y(y))}" for x, y in points)

    def point(self, x: float, y: float, cls: str = "point", tip: str | None = None, r: float = 3.5) -> None:
        self.add(f'<circle class="{cls}" cx="{_n(self.x(x))}" cy="{_n(self.y(y))}" r="{r:g}">{_title(tip)}</circle>')

    def bars(self, edges: Sequence[float], counts: Sequence[float], cls: str = "bar",
             tips: Sequence[str] | None = None, classes: Sequence[str] | None = None, gap: float = 1.5) -> None:
        """One bar per bin: bin i from edges[i] to edges[i + 1], up to counts[i] (drawn from y = 0)."""
        for i, n in enumerate(counts):
            x0, x1 = self.x(edges[i]) + gap, self.x(edges[i + 1]) - gap
            h = self.y(0) - self.y(n)
            c = classes[i] if classes else cls
            self.add(f'<rect class="{c}" x="{_n(x0)}" y="{_n(self.y(0) - h)}" width="{_n(max(0.0, x1 - x0))}" '
                     f'height="{_n(h)}">{_title(tips[i] if tips else None)}</rect>')

    def interval(self, y: float, low: float, high: float, mid: float, cls: str = "interval",
                 tip: str | None = None, data: dict[str, object] | None = None) -> None:
        """A horizontal interval from low to high at height y, with a point at mid (a change and its CI); `data`:
        the group's data- attributes (what it shows, for a reader of the page)."""
        yy = _n(self.y(y))
        attrs = "".join(f' data-{k}="{escape(str(v))}"' for k, v in (data or {}).items())
        self.add(f'<g class="{cls}"{attrs}>{_title(tip)}<line class="interval {cls}" x1="{_n(self.x(low))}" '
                 f'x2="{_n(self.x(high))}" y1="{yy}" y2="{yy}"/><circle class="point {cls}" cx="{_n(self.x(mid))}" '
                 f'cy="{yy}" r="4"/></g>')

    def svg(self, label: str, cls: str = "plot") -> str:
        """The finished <svg>: role=img with `label` as its accessible description."""
        return (f'<svg class="{cls}" viewBox="0 0 {self.width} {self.height}" width="{self.width}" '
                f'height="{self.height}" role="img" aria-label="{escape(label)}">'
                + "".join(self.parts) + "</svg>")


def histogram(plot: Plot, values: Sequence[float], bins: int = 10, cls: str = "bar", noun: str = "sample",
              below: float | None = None, digits: int = 1) -> list[int]:
    """A histogram of values over the plot's x range in `bins` equal bins (the plot's y range is set to the
    highest count); a bin wholly below `below` gets the class "bar below"; each bar's tooltip its bin (edges with
    `digits` decimals) and count. Returns the counts."""
    from ..core.number_text import count_text  # noqa: PLC0415

    lo, hi = plot.x_range
    counts = bin_counts(values, bins, lo, hi)
    plot.y_range = (0.0, float(max(counts) or 1))
    edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    tips = [f"{edges[i]:.{digits}f}–{edges[i + 1]:.{digits}f}{']' if i == bins - 1 else ')'}: {count_text(n, noun)}"
            for i, n in enumerate(counts)]
    classes = [f"{cls} below" if below is not None and edges[i + 1] <= below else cls for i in range(bins)]
    plot.bars(edges, counts, tips=tips, classes=classes)
    return counts
