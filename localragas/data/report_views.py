"""A Report's own views, beside the model that calls them (data/schema.py Report): pandas frames (Report.to_pandas,
Report.summary_frame, Report.conversations_frame), a short repr (a few lines: verdict, each metric's mean and interval), an HTML table for Jupyter
(Report._repr_html_) and its scores' histograms drawn with matplotlib (Report.plot); with the pieces of text the report
writers share with them (report/: the text columns of the CSV, the line naming the fields no field read).

Below the report writers and importing nothing of theirs, so that the model shows itself without the report layer.
pandas is imported inside the frame functions (a dependency of localragas, but `import localragas` stays cheap);
matplotlib, an optional one, inside plot, which names the install command when it is missing.
"""
from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError, MissingDependencyError
from ..core.number_text import interval_text, score_text, threshold_text
from .conversation_summary import conversation_summaries, has_conversations

if TYPE_CHECKING:
    from .schema import Report, SampleResult

# The text's columns in the CSV report and Report.to_pandas(), in order; under --ragas-names ragas's names for them
TEXT_COLUMNS = ("question", "answer", "contexts", "reference")
RAGAS_TEXT_COLUMNS = {"question": "user_input", "answer": "response", "contexts": "retrieved_contexts",
                      "reference": "reference"}


def text_columns(meta: dict) -> list[str]:
    """The text columns of a report with this meta: none when its run kept no text (meta.sample_text false, or a
    report written before the text was kept), ragas's names when its metrics are under theirs (--ragas-names)."""
    if meta.get("sample_text") is not True:
        return []
    ragas = meta.get("metric_names") == "ragas"
    return [RAGAS_TEXT_COLUMNS[c] if ragas else c for c in TEXT_COLUMNS]


def text_cells(result: "SampleResult") -> list:
    """A result's question, answer, contexts (a list) and reference, None each when it holds no text."""
    t = result.input
    return [None] * 4 if t is None else [t.question, t.answer, list(t.contexts), t.reference]


def turn_columns(report: "Report") -> list[str]:
    """conversation, turn: the CSV report's and Report.to_pandas()'s columns of a turn's place, when the report's
    results hold conversations (meta.conversations); none otherwise, as before conversations."""
    return ["conversation", "turn"] if has_conversations(report) else []


def turn_cells(result: "SampleResult") -> list:
    """A result's conversation and turn number, None each for a single sample."""
    return [None, None] if result.turn is None else [result.turn.conversation, result.turn.turn]


def ignored_line(meta: Mapping[str, Any], shown: int = 10) -> str | None:
    """"ignored fields: notes, meta_source" from a report's meta (the names no field read), or None without any."""
    names = [str(n) for n in meta.get("ignored_fields") or []]
    if not names:
        return None
    more = f" and {len(names) - shown} more (report.meta.ignored_fields)" if len(names) > shown else ""
    return f"ignored fields: {', '.join(names[:shown])}{more}"


def _pandas() -> Any:
    try:
        import pandas  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError("Report.to_pandas() and summary_frame() need pandas: pip install pandas") from None
    return pandas


def sample_frame(report: "Report") -> Any:
    """One row per sample, the columns of the CSV report (`--csv`): id, category, the sample's text when the run kept
    it (question, answer, contexts as a list, reference), each metric's value (NaN when unscored), each metric's
    unscored reason (`{metric}_unscored`, None when scored), seconds."""
    pd = _pandas()
    text, place = text_columns(report.meta), turn_columns(report)
    rows = []
    for s in report.samples:
        got = [s.metrics.get(m) for m in report.metrics]
        rows.append([s.id, s.category, *turn_cells(s)[:len(place)], *text_cells(s)[:len(text)],
                     *(None if r is None else r.value for r in got), *(None if r is None else r.unscored for r in got),
                     s.seconds])
    columns = ["id", "category", *place, *text, *report.metrics, *(f"{m}_unscored" for m in report.metrics),
               "seconds"]
    frame = pd.DataFrame(rows, columns=columns)
    for m in report.metrics:  # all-unscored columns stay numeric (NaN), not object
        frame[m] = frame[m].astype("float64")
    if place:
        frame["turn"] = frame["turn"].astype("Int64")  # a single sample's is <NA>, the others whole numbers
    return frame


def conversation_frame(report: "Report") -> Any:
    """One row per conversation (Report.conversations_frame): conversation, category, turns, and per metric
    `{metric}` (its mean over the conversation's scored turns), `{metric}_worst`, `{metric}_worst_turn`."""
    pd = _pandas()
    per = [(m, f"{m}_worst", f"{m}_worst_turn") for m in report.metrics]
    rows = [[c.conversation, c.category, c.turns,
             *(x for m in report.metrics for x in (c.metrics[m].mean, c.metrics[m].worst, c.metrics[m].worst_turn))]
            for c in conversation_summaries(report)]
    frame = pd.DataFrame(rows, columns=["conversation", "category", "turns", *(c for cols in per for c in cols)])
    for mean, worst, _ in per:
        frame[mean], frame[worst] = frame[mean].astype("float64"), frame[worst].astype("float64")
    return frame


def summary_frame(report: "Report") -> Any:
    """One row per metric (the index): mean, 95% interval, threshold, passed (None without a threshold or with the
    gate off), status (passed, failed, not_evaluated, error), scored and unscored counts, higher_is_better."""
    pd = _pandas()
    gate = {g.metric: g for g in report.gate.results}
    rows = []
    for s in report.summary:
        g = gate.get(s.metric) if report.gate.enabled else None
        rows.append({"metric": s.metric, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high,
                     "threshold": g.threshold if g else None, "passed": (g.status == "passed") if g else None,
                     "status": _status(report, s.metric), "scored": s.scored, "unscored": s.unscored,
                     "higher_is_better": s.higher_is_better})
    columns = ["metric", "mean", "ci_low", "ci_high", "threshold", "passed", "status", "scored", "unscored",
               "higher_is_better"]
    frame = pd.DataFrame(rows, columns=columns).set_index("metric")
    for c in ("mean", "ci_low", "ci_high", "threshold"):
        frame[c] = frame[c].astype("float64")
    return frame


def _status(report: "Report", metric: str) -> str | None:
    if any(x.metric == metric and not x.allowed for x in report.gate.errors):
        return "error"
    if not report.gate.enabled:
        return None
    return next((g.status for g in report.gate.results if g.metric == metric), None)


def verdict(report: "Report") -> str:
    """'gate PASSED' / 'gate FAILED' / 'gate off', and 'could not evaluate' when errors left a metric unscored."""
    text = "gate off" if not report.gate.enabled else "gate PASSED" if report.gate.passed else "gate FAILED"
    if report.gate.on == "lower-bound" and report.gate.enabled:
        text += " (on each 95% CI lower bound)"
    if not report.gate.evaluated:
        text += "; could not evaluate (errors left samples unscored)"
    return text


def _rows(report: "Report") -> list[dict[str, str]]:
    gate = {g.metric: g for g in report.gate.results}
    out = []
    for s in report.summary:
        g = gate.get(s.metric) if report.gate.enabled else None
        out.append({
            "metric": s.metric + ("" if s.higher_is_better else " (lower is better)"),
            "mean": score_text(s.mean),
            "ci": interval_text(s.ci_low, s.ci_high, form="brackets", missing=""),
            "threshold": (("≤ " if not s.higher_is_better else "≥ ") + threshold_text(g.threshold)) if g else "",
            "status": _status(report, s.metric) or "",
            "scored": f"{s.scored}/{s.scored + s.unscored}",
            "unscored": ", ".join(f"{k} {v}" for k, v in s.unscored_reasons.items()),
        })
    return out


def _judge_name(report: "Report") -> str:
    judge = report.meta.get("judge")
    return str(judge.get("name")) if isinstance(judge, dict) and judge.get("name") else ""


def text(report: "Report") -> str:
    """A few lines: the verdict, then one line per metric (mean, interval, threshold, status). The full report is
    report.model_dump_json() or localragas.report.write_json."""
    n = len(report.samples)
    judge = _judge_name(report)
    lines = [f"<localragas Report: {verdict(report)}; {n} sample{'' if n == 1 else 's'}"
             + (f", judge {judge}" if judge else "") + ">"]
    rows = _rows(report)
    width = max((len(r["metric"]) for r in rows), default=0)
    for r in rows:
        parts = [r["metric"].ljust(width), r["mean"].rjust(5), r["ci"].ljust(16), r["threshold"], r["status"]]
        if r["scored"].split("/")[0] != r["scored"].split("/")[1]:
            parts.append(f"scored {r['scored']}" + (f" ({r['unscored']})" if r["unscored"] else ""))
        lines.append("  " + " ".join(p for p in parts if p).rstrip())
    if report.skipped:
        lines.append(f"  {len(report.skipped)} invalid row(s) skipped")
    if ignored := ignored_line(report.meta):
        lines.append(f"  {ignored}")
    return "\n".join(lines)


def html_table(report: "Report") -> str:
    """The verdict and a table of the metrics (mean, 95% interval, threshold, status, scored), every text escaped."""
    e = html.escape
    n = len(report.samples)
    judge = _judge_name(report)
    color = "#1a7f37" if report.gate.passed and report.gate.evaluated else "#cf222e"
    if not report.gate.enabled:
        color = "#57606a"
    head = (f"<p><b style=\"color:{color}\">{e(verdict(report))}</b> — {n} sample{'' if n == 1 else 's'}"
            + (f", judge <code>{e(judge)}</code>" if judge else "") + "</p>")
    cols = [("metric", "metric"), ("mean", "mean"), ("ci", "95% CI"), ("threshold", "threshold"),
            ("status", "status"), ("scored", "scored"), ("unscored", "unscored")]
    cells = "".join(f"<th>{e(label)}</th>" for _, label in cols)
    body = "".join("<tr>" + "".join(f"<td>{e(r[key])}</td>" for key, _ in cols) + "</tr>" for r in _rows(report))
    skipped = f"<p>{len(report.skipped)} invalid row(s) skipped</p>" if report.skipped else ""
    if ignored := ignored_line(report.meta):
        skipped += f"<p>{e(ignored)}</p>"
    return (f"<div class=\"localragas-report\">{head}<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody>"
            f"</table>{skipped}</div>")


# a metric's colour in Report.plot(), by its gate status: passed green, failed or could not evaluate red, not
# evaluated amber, not gated blue (the HTML report's colours)
PLOT_COLOURS = {"passed": "#1d7049", "failed": "#b3261e", "error": "#b3261e", "not_evaluated": "#8a5a00",
                None: "#2f6fb3"}
_STATUS_TEXT = {"passed": "passed", "failed": "FAILED", "error": "could not evaluate", "not_evaluated": "not evaluated"}


def plot(report: "Report", metrics: list[str] | None = None) -> Any:
    """Report.plot(): a matplotlib Figure (no pyplot state), one panel per metric: the histogram of its sample scores
    in 10 bins over [0, 1] (as the HTML report's) in its gate status's colour (PLOT_COLOURS: passed green, failed
    red; its title too), its gate threshold as a dashed line, its mean and interval under the bars; the legend (the
    threshold and the status, the mean and interval) below the panel, clear of the bars."""
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError("Report.plot() draws with matplotlib, which is not installed: "
                                     "pip install matplotlib") from None
    names = list(metrics) if metrics is not None else list(report.metrics)
    unknown = [m for m in names if m not in report.metrics]
    if unknown:
        raise ConfigError(f"Report.plot(metrics=...): {', '.join(unknown)} not in the report; its metrics: "
                          f"{', '.join(report.metrics)}")
    thresholds = {g.metric: g.threshold for g in report.gate.results}
    fig = Figure(figsize=(3.4 * max(1, len(names)), 3.6), layout="constrained")
    for ax, name in zip(fig.subplots(1, max(1, len(names)), squeeze=False)[0], names):
        status = _status(report, name)
        colour = PLOT_COLOURS.get(status, PLOT_COLOURS[None])
        values = [r.value for s in report.samples if (r := s.metrics.get(name)) is not None and r.value is not None]
        ax.hist(values, bins=10, range=(0.0, 1.0), color=colour, alpha=0.8, edgecolor="white")
        ax.set_xlim(0, 1)
        ax.set_title(name, fontsize=10, color=colour)
        ax.set_xlabel(f"score ({len(values)} scored)", fontsize=9)
        if name in thresholds:
            gate = f": {_STATUS_TEXT[status]}" if status in _STATUS_TEXT else ""
            ax.axvline(thresholds[name], color="#1c2230", linestyle="--",
                       label=f"threshold {threshold_text(thresholds[name])}{gate}")
        s = next((x for x in report.summary if x.metric == name), None)
        if s is not None and s.mean is not None:
            lo, hi = (s.ci_low, s.ci_high) if s.ci_low is not None and s.ci_high is not None else (s.mean, s.mean)
            ci = s.ci_low is not None and s.ci_high is not None
            ax.errorbar([s.mean], [0], xerr=[[s.mean - lo], [hi - s.mean]], fmt="o", color="black", capsize=3,
                        label=f"mean {score_text(s.mean)}" + (f", 95% CI {interval_text(lo, hi)}" if ci else ""),
                        clip_on=False, zorder=3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    return fig
