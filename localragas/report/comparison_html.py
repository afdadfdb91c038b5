"""`compare --html`: the comparison as a self-contained page (report/plot_page.py): the differences of method first,
then each metric's paired difference drawn with its interval and the zero line (report/svg.py), the table, and the
samples that moved most."""
from __future__ import annotations

from ..core.number_text import percent_text, score_text
from ..quality.compare import Comparison, MetricChange
from .comparison_text import change_interval, method_lines, verdict_label, verdict_lines
from .plot_page import FULL_WIDTH, Section, render_page
from .svg import Plot, ticks

_ROW, _LEFT = 34, 170  # a metric's row height; the margin for its name
_CHAR = 7.5  # about the width of a character of the numbers' text (12px), for the right margin that holds them


def _reach(c: Comparison) -> float:
    """Half the x range: every change and interval fits, and zero is in the middle."""
    ends = [abs(v) for m in c.metrics for v in (m.diff, m.ci_low, m.ci_high) if v is not None]
    return max([0.01, *ends]) * 1.15


def _numbers(m: MetricChange) -> str:
    """A row's text beside the plot: the change, its interval and the verdict."""
    if m.diff is None or m.ci_low is None or m.ci_high is None:
        return verdict_label(m)
    return f"{score_text(m.diff, signed=True)} ({change_interval(m.ci_low, m.ci_high)}) {verdict_label(m)}"


def differences_svg(c: Comparison) -> str:
    """Each metric's paired difference (new - base) as a point with its interval, one row per metric, and the zero
    line: an interval across zero is within the noise. Each row's group holds the metric and its numbers in data-
    attributes and a tooltip."""
    reach = _reach(c)
    n = max(1, len(c.metrics))
    texts = [_numbers(m) for m in c.metrics]
    right = int(16 + _CHAR * max([20, *(len(t) for t in texts)]))
    plot = Plot(max(FULL_WIDTH, _LEFT + 360 + right), 30 + _ROW * n + 44, x_range=(-reach, reach), y_range=(0, n),
                margins=(_LEFT, right, 30, 44))
    marks = ticks(-reach, reach, 5)
    for v in marks:
        plot.vline(v, cls="grid")
    plot.axes(x_ticks=marks, x_label=f"change (new - base), with its {percent_text(c.level)} paired interval",
              fmt=lambda v: score_text(v, digits=2, signed=True) if v else "0")
    plot.vline(0, cls="zero", label="no change")
    for i, m in enumerate(c.metrics):
        y = n - i - 0.5
        plot.text(_LEFT - 8, plot.y(y) + 4, m.metric, cls="label", anchor="end")
        plot.text(plot.right + 8, plot.y(y) + 4, texts[i], anchor="start")
        if m.diff is None or m.ci_low is None or m.ci_high is None:
            continue
        plot.interval(y, m.ci_low, m.ci_high, m.diff, cls=m.verdict, tip=f"{m.metric}: {texts[i]}, {m.pairs} pairs",
                      data={"metric": m.metric, "diff": m.diff, "low": m.ci_low, "high": m.ci_high})
    return plot.svg(f"paired differences of {n} metrics, new minus base, with their intervals and the zero line")


def render_comparison_html(c: Comparison) -> str:
    sections = []
    method = method_lines(c)
    if method:
        sections.append(Section(heading=method[0], items=[line.removeprefix("- ") for line in method[1:]],
                                css="warning" if c.method_changed_for else ""))
    rows = [["metric", "base", "new", "change", f"{percent_text(c.level)} CI of change", "pairs", "verdict"]]
    rows += [[m.metric, score_text(m.base_mean), score_text(m.new_mean), score_text(m.diff, signed=True),
              change_interval(m.ci_low, m.ci_high), str(m.pairs), verdict_label(m)]
             for m in c.metrics]
    sections.append(Section(heading="Paired differences", notes=[text for _, text in verdict_lines(c)]
                            + [f"{m.metric}: {m.note}" for m in c.metrics if m.note],
                            figures=[(differences_svg(c), "A point is the mean change over the samples scored in "
                                      "both runs; its line, the interval. A line across zero: within the noise.")],
                            table=rows))
    if c.warnings:
        sections.append(Section(heading="Warnings", items=list(c.warnings)))
    moved = [[name, s.id, score_text(s.base), score_text(s.new), score_text(s.diff, signed=True)]
             for name, changes in c.largest_changes.items() for s in changes]
    if moved:
        sections.append(Section(heading="Samples that moved most",
                                table=[["metric", "sample", "base", "new", "change"], *moved]))
    return render_page(f"localragas compare — {c.base} → {c.new}", sections)
