"""How a comparison of two runs is shown: a terminal table and a Markdown summary, plus its JSON file."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..core.number_text import interval_text, percent_text, score_text
from ..quality.compare import Comparison
from .console import Columns, console_text as escape, report_console
from ..core.atomic_write import write_atomic
from .markdown import cell

_LABEL = {"improved": "improved", "regressed": "REGRESSED", "within_noise": "within noise",
          "not_comparable": "not comparable (< 2 pairs)"}
_STYLE = {"improved": "green", "regressed": "bold red", "within_noise": "dim", "not_comparable": "yellow"}
_MD = {"improved": "🟢 improved", "regressed": "🔴 regressed", "within_noise": "⚪ within noise",
       "not_comparable": "⚠️ not comparable"}


def _ci(lo: float | None, hi: float | None) -> str:
    """The interval of a change: +0.010 … +0.030."""
    return interval_text(lo, hi, form="ellipsis", signed=True)


def print_comparison(c: Comparison, console: Console | None = None) -> None:
    console = console or report_console()
    t = Table(title=f"localragas compare — {escape(c.base)} → {escape(c.new)}", title_justify="left")
    columns: Columns = [("metric", "left"), ("base", "right"), ("new", "right"), ("change", "right"),
                        (f"{percent_text(c.level)} CI of change", "right"), ("pairs", "right"), ("verdict", "left")]
    for col, just in columns:
        t.add_column(col, justify=just)
    for m in c.metrics:
        t.add_row(escape(m.metric), score_text(m.base_mean), score_text(m.new_mean), score_text(m.diff, signed=True),
                  _ci(m.ci_low, m.ci_high),
                  str(m.pairs), f"[{_STYLE[m.verdict]}]{_LABEL[m.verdict]}[/]")
    console.print(t)
    for w in c.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    for m in c.metrics:
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
    if c.regressed:
        console.print(f"[bold red]regressed beyond noise:[/] {escape(', '.join(c.regressed))}")
    else:
        console.print("[green]no metric regressed beyond noise[/]")


def render_comparison_markdown(c: Comparison) -> str:
    lines = [f"### localragas compare: {cell(c.base)} → {cell(c.new)}", "",
             f"| metric | base | new | change | {percent_text(c.level)} CI | pairs | verdict |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for m in c.metrics:
        lines.append(f"| {cell(m.metric)} | {score_text(m.base_mean)} | {score_text(m.new_mean)} | "
                     f"{score_text(m.diff, signed=True)} | "
                     f"{_ci(m.ci_low, m.ci_high)} | {m.pairs} | {_MD[m.verdict]} |")
    if c.warnings:
        lines += [""] + [f"> ⚠️ {cell(w)}" for w in c.warnings]
    moved = [(m.metric, s) for m in c.metrics for s in c.largest_changes.get(m.metric) or []]
    if moved:
        lines += ["", "<details><summary>largest per-sample changes</summary>", "",
                  "| metric | sample | base | new | change |", "|---|---|---:|---:|---:|"]
        lines += [f"| {cell(name)} | {cell(s.id)} | {score_text(s.base)} | {score_text(s.new)} | "
                  f"{score_text(s.diff, signed=True)} |" for name, s in moved]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def write_comparison(c: Comparison, json_path: str | Path | None = None, md_path: str | Path | None = None) -> None:
    if json_path:
        write_atomic(json_path, c.model_dump_json(indent=2) + "\n")
    if md_path:
        write_atomic(md_path, render_comparison_markdown(c))
