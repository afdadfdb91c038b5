from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..judges.calibration_map import uncalibrated_note
from ..core.number_text import interval_text, score_text, seconds_text, threshold_text
from ..run.canaries import canary_line
from ..run.judge_check import check_details, check_line
from ..data.language import prompts_line
from ..data.conversation_summary import lower_metrics, mean_text, worst_conversations, worst_title, worst_turn_text
from ..data.report_views import ignored_line
from ..data.schema import Report
from .console import Columns, console_text as _t, report_console
from .spot_checks_terminal import print_spot_checks

_STYLE = {"passed": "green", "failed": "bold red", "not_evaluated": "yellow", "error": "bold red"}
_ON = {"lower-bound": " (each metric's 95% CI lower bound against its threshold)"}


def thresholds_line(gate) -> str | None:
    """Each gated metric's threshold and why it applies ("faithfulness >= 0.50 (uncalibrated default)"), printed
    with every gate; the defaults' table: docs/gate.md#thresholds."""
    parts = [f"{g.metric} {'>=' if g.higher_is_better else '<='} {threshold_text(g.threshold)}"
             + (f" ({g.threshold_source})" if g.threshold_source else "") for g in gate.results]
    return "  thresholds: " + ", ".join(parts) if parts else None
_LABEL = {"passed": "PASS", "failed": "FAIL", "not_evaluated": "not evaluated", "error": "ERROR"}


def print_conversations(report: Report, console: Console) -> None:
    """The worst conversations (data/conversation_summary.py), when the results hold any: each metric's mean over
    the conversation's turns and its worst turn."""
    rows, count = worst_conversations(report)
    if not rows:
        return
    lower = lower_metrics(report)
    c = Table(title=worst_title(len(rows), count), title_justify="left")
    c.add_column("conversation", overflow="fold")
    c.add_column("turns", justify="right")
    for m in report.metrics:
        c.add_column(_t(m), justify="right")
    c.add_column("worst turn", overflow="fold")
    for row in rows:
        c.add_row(_t(row.conversation), str(row.turns), *(mean_text(row.metrics[m]) for m in report.metrics),
                  _t(worst_turn_text(row, lower)))
    console.print(c)


def print_report(report: Report, console: Console | None = None) -> None:
    """The score table, a per-category breakdown when samples have categories, the worst conversations when they are
    turns of conversations, and the gate verdict."""
    console = console or report_console()
    gate = {g.metric: g for g in report.gate.results}
    t = Table(title=f"localragas — {report.meta.get('samples', len(report.samples))} samples", title_justify="left")
    columns: Columns = [("metric", "left"), ("mean", "right"), ("95% CI", "right"), ("scored", "right"),
                        ("unscored", "right"), ("threshold", "right"), ("verdict", "left")]
    for col, just in columns:
        t.add_column(col, justify=just, overflow="fold" if col == "metric" else "ellipsis")
    broken = {x.metric for x in report.gate.errors if not x.allowed}
    for s in report.summary:
        g = gate.get(s.metric)
        reasons = ", ".join(f"{k} {v}" for k, v in s.unscored_reasons.items())
        verdict = f"[{_STYLE[g.status]}]{_LABEL[g.status]}[/]" if g and report.gate.enabled else ""
        if s.metric in broken and not (g and report.gate.enabled):
            verdict = f"[{_STYLE['error']}]{_LABEL['error']}[/]"  # ungated, or gate off: still could not evaluate
        name = _t(s.metric) if s.higher_is_better else f"{_t(s.metric)}\n(lower is better)"
        t.add_row(name, score_text(s.mean), interval_text(s.ci_low, s.ci_high), str(s.scored),
                  f"{s.unscored}" + (f" ({_t(reasons)})" if reasons else ""),
                  threshold_text(g.threshold) if g else "", verdict)
    console.print(t)

    if report.by_category:
        c = Table(title="by category", title_justify="left")
        c.add_column("category")
        for m in report.metrics:
            c.add_column(_t(m), justify="right")
        for cat, rows in report.by_category.items():
            n = max((r.scored + r.unscored for r in rows), default=0)
            c.add_row(f"{_t(cat)} ({n})", *(score_text(r.mean) for r in rows))
        console.print(c)

    print_conversations(report, console)
    if report.skipped:
        console.print(f"[yellow]{len(report.skipped)} invalid row(s) skipped[/] (listed in the JSON report)")
    if ignored := ignored_line(report.meta):
        console.print(f"[yellow]{_t(ignored)}[/] (no field reads them)")
    stats = report.meta.get("judge_stats") or {}
    if stats:
        console.print(
            f"judge {_t(report.meta['judge']['name'])}: {stats['calls']} calls, "
            f"{stats.get('cache_hits', 0)} from the cache, "
            f"{stats['failed_calls']} failed, "
            f"{stats['prompt_tokens']} prompt + {stats['completion_tokens']} generated tokens, "
            f"{seconds_text(stats['seconds'])} in the judge of {seconds_text(report.meta.get('wall_seconds', 0))} wall"
        )
        totals, resumed = report.meta.get("judge_totals") or {}, report.meta.get("resumed_samples") or 0
        if resumed and totals:  # the line above counts this process only; the checkpoint's samples were judged before
            console.print(
                f"  {resumed} sample(s) resumed from a checkpoint; all {len(report.samples)} samples together: "
                f"{int(totals.get('calls', 0))} calls, {int(totals.get('prompt_tokens', 0))} prompt + "
                f"{int(totals.get('completion_tokens', 0))} generated tokens"
            )
    if line := prompts_line(report.meta.get("languages") or {}):
        console.print(_t(line))
    for line in (check_line(report.meta), check_details(report.meta)):
        if line:
            console.print(_t(line))
    if line := canary_line(report.meta):
        console.print(_t(line) if "FAILED" not in line else f"[red]{_t(line)}[/]")
    if note := uncalibrated_note(report.meta):
        console.print(f"[yellow]{_t(note)}[/]")
    print_spot_checks(report, console)
    if not report.gate.enabled:
        console.print("quality gate: off")
    elif report.gate.passed:
        unchecked = [g.metric for g in report.gate.results if g.status == "not_evaluated"]
        console.print(f"[bold green]quality gate PASSED[/]{_ON.get(report.gate.on, '')}"
                      + (f", [yellow]not evaluated: {_t(', '.join(unchecked))}[/]" if unchecked else ""))
    else:
        console.print(f"[bold red]quality gate FAILED[/]{_ON.get(report.gate.on, '')}")
        for g in report.gate.results:
            if g.status == "failed":
                console.print(f"  [red]✗[/] {_t(g.message)}")
    if report.gate.enabled and (line := thresholds_line(report.gate)):
        console.print(_t(line))
    if not report.gate.evaluated:
        console.print("[bold red]could not evaluate[/]: errors (judge, cache, embedder, I/O) left samples unscored; "
                      "the gate fails closed (exit 4; --max-error-rate accepts a share)")
    for x in report.gate.errors:
        mark = "[yellow]![/]" if x.allowed else "[red]![/]"
        console.print(f"  {mark} {_t(x.message)}")
    for g in report.gate.results:
        if g.status == "not_evaluated":
            console.print(f"  [yellow]?[/] {_t(g.message)}")
