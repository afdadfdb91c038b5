"""How a comparison of two runs is shown: a terminal table and a Markdown summary, plus its JSON file."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..core.number_text import interval_text, percent_text, score_text
from ..quality.compare import Comparison, MetricChange
from .console import Columns, console_text as escape, report_console
from ..core.atomic_write import write_atomic
from .markdown import cell

_LABEL = {"improved": "improved", "regressed": "REGRESSED", "within_noise": "within noise",
          "not_comparable": "UNDECIDED (too few pairs)", "not_evaluated": "not evaluated (in either run)"}
_STYLE = {"improved": "green", "regressed": "bold red", "within_noise": "dim", "not_comparable": "bold yellow",
          "not_evaluated": "dim"}
_MD = {"improved": "🟢 improved", "regressed": "🔴 regressed", "within_noise": "⚪ within noise",
       "not_comparable": "⚠️ undecided (too few pairs)", "not_evaluated": "⚪ not evaluated (in either run)"}


def _ci(lo: float | None, hi: float | None) -> str:
    """The interval of a change: +0.010 … +0.030."""
    return interval_text(lo, hi, form="ellipsis", signed=True)


def method_lines(c: Comparison) -> list[str]:
    """How the runs' methods differ, in plain words, headed by what that means for the changes: shown before them.
    Empty when they measured the same way."""
    if not c.method_differences:
        return []
    if c.method_changed_for:
        head = (f"the method changed: the differences below mix the RAG system's change with the method's "
                f"({', '.join(c.method_changed_for)})")
    else:
        head = "the scores were measured the same way; these differ, and move no score:"
    return [head] + [f"- {d.text}" for d in c.method_differences]


def _label(m: MetricChange, labels: dict[str, str]) -> str:
    return (labels[m.verdict] + (" (method changed)" if m.method_changed else "")
            + (" (prediction-powered)" if m.estimate == "prediction-powered" else ""))


def print_comparison(c: Comparison, console: Console | None = None) -> None:
    console = console or report_console()
    lines = method_lines(c)
    if lines:
        console.print(f"[bold yellow]{escape(lines[0])}[/]")
        for line in lines[1:]:
            console.print(f"  {escape(line)}")
    t = Table(title=f"localragas compare — {escape(c.base)} → {escape(c.new)}", title_justify="left")
    columns: Columns = [("metric", "left"), ("base", "right"), ("new", "right"), ("change", "right"),
                        (f"{percent_text(c.level)} CI of change", "right"), ("pairs", "right"), ("verdict", "left")]
    for col, just in columns:
        t.add_column(col, justify=just)
    for m in c.metrics:
        t.add_row(escape(m.metric), score_text(m.base_mean), score_text(m.new_mean), score_text(m.diff, signed=True),
                  _ci(m.ci_low, m.ci_high),
                  str(m.pairs), f"[{_STYLE[m.verdict]}]{_label(m, _LABEL)}[/]")
    console.print(t)
    for w in c.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    for m in c.metrics:
        if m.note:
            console.print(f"{escape(m.metric)}: {escape(m.note)}")
        moved = c.largest_changes.get(m.metric) or []
        if moved:
            console.print(f"{escape(m.metric)}: largest changes " + ", ".join(
                f"{escape(s.id)} {score_text(s.base, digits=2)}→{score_text(s.new, digits=2)}" for s in moved))
        if m.became_unscored:
            console.print(f"{escape(m.metric)}: unscored in the new run only: "
                          f"{escape(', '.join(m.became_unscored[:10]))}"
                          + (" …" if len(m.became_unscored) > 10 else ""))
        if m.became_scored:
            console.print(f"{escape(m.metric)}: unscored in the base run only: "
                          f"{escape(', '.join(m.became_scored[:10]))}"
                          + (" …" if len(m.became_scored) > 10 else ""))
    for style, text in verdict_lines(c):
        console.print(f"[{style}]{escape(text)}[/]")


def verdict_lines(c: Comparison) -> list[tuple[str, str]]:
    """The comparison's last word, as (style, text) lines: the metrics that regressed beyond noise, apart from them
    those that moved beyond noise under a changed method, which are not called a change of the RAG system, and those
    over too few pairs to decide. "No metric regressed" only when every metric was decided."""
    same = [m for m in c.regressed if m not in c.method_changed_for]
    mixed = [m for m in c.metrics if m.method_changed and m.verdict in ("regressed", "improved")]
    out = []
    if same:
        out.append(("bold red", f"regressed beyond noise: {', '.join(same)}"))
    if mixed:
        out.append(("yellow", "moved beyond noise under a changed method (not a change of the RAG system alone): "
                    + ", ".join(f"{m.metric} {_LABEL[m.verdict].lower()}" for m in mixed)))
    if c.undecided:
        out.append(("bold yellow", f"undecided: {c.undecided_text()}"))
    elif not same and not mixed:
        out.append(("green", "no metric regressed beyond noise"
                    + (" (under a changed method: see above)" if c.method_changed_for else "")))
    return out


def render_comparison_markdown(c: Comparison) -> str:
    lines = [f"### localragas compare: {cell(c.base)} → {cell(c.new)}", ""]
    method = method_lines(c)
    if method:
        lines += [f"> ⚠️ **{cell(method[0])}**", ">"] + [f"> {cell(line)}" for line in method[1:]] + [""]
    lines += [f"| metric | base | new | change | {percent_text(c.level)} CI | pairs | verdict |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for m in c.metrics:
        lines.append(f"| {cell(m.metric)} | {score_text(m.base_mean)} | {score_text(m.new_mean)} | "
                     f"{score_text(m.diff, signed=True)} | "
                     f"{_ci(m.ci_low, m.ci_high)} | {m.pairs} | {_label(m, _MD)} |")
    if c.warnings:
        lines += [""] + [f"> ⚠️ {cell(w)}" for w in c.warnings]
    lines += [""] + [f"**{cell(text)}**" for _, text in verdict_lines(c)]
    notes = [f"- {cell(m.metric)}: {cell(m.note)}" for m in c.metrics if m.note]
    if notes:
        lines += [""] + notes
    moved = [(m.metric, s) for m in c.metrics for s in c.largest_changes.get(m.metric) or []]
    if moved:
        lines += ["", "<details><summary>largest per-sample changes</summary>", "",
                  "| metric | sample | base | new | change |", "|---|---|---:|---:|---:|"]
        lines += [f"| {cell(name)} | {cell(s.id)} | {score_text(s.base)} | {score_text(s.new)} | "
                  f"{score_text(s.diff, signed=True)} |" for name, s in moved]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def write_comparison(c: Comparison, json_path: str | Path | None = None, md_path: str | Path | None = None,
                     html_path: str | Path | None = None) -> None:
    if json_path:
        write_atomic(json_path, c.model_dump_json(indent=2) + "\n")
    if md_path:
        write_atomic(md_path, render_comparison_markdown(c))
    if html_path:
        from .comparison_html import render_comparison_html  # noqa: PLC0415

        write_atomic(html_path, render_comparison_html(c))
