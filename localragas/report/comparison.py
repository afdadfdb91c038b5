"""How a comparison of two runs is shown: a terminal table and a Markdown summary, plus its JSON file."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..core.number_text import percent_text, score_text
from ..quality.compare import Comparison
from .console import Columns, console_text as escape, report_console
from ..core.atomic_write import write_atomic
from .comparison_text import change_interval, method_lines, verdict_label, verdict_lines
from .markdown import cell

_STYLE = {"improved": "green", "regressed": "bold red", "within_noise": "dim", "not_comparable": "bold yellow",
          "not_evaluated": "dim"}
_MD = {"improved": "🟢 improved", "regressed": "🔴 regressed", "within_noise": "⚪ within noise",
       "not_comparable": "⚠️ undecided (too few pairs)", "not_evaluated": "⚪ not evaluated (in either run)"}


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
                  change_interval(m.ci_low, m.ci_high),
                  str(m.pairs), f"[{_STYLE[m.verdict]}]{verdict_label(m)}[/]")
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
                     f"{change_interval(m.ci_low, m.ci_high)} | {m.pairs} | {verdict_label(m, _MD)} |")
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
