"""How `localragas calibrate` is shown: a terminal table per file, a Markdown table, the JSON file."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..quality.agreement import Estimate
from ..quality.calibration_results import (Calibration, CalibrationRun, calibration_source, figure_text, measure_label,
                                           rows_text, suggested_text, unscored_text)
from ..judges.calibration_map import uncalibrated_note
from ..core.number_text import interval_text, percent_text, score_text, seconds_text
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES, failing, read_input
from .console import Columns, console_text as escape, report_console
from ..core.atomic_write import write_atomic
from .markdown import cell


def _seconds(c: Calibration) -> str:
    return "—" if c.seconds_per_sample is None else seconds_text(c.seconds_per_sample, digits=2, unit=False)


def _why(c: Calibration) -> list[str]:
    """Why figures are missing (one line per distinct reason), and the calibration's own notes."""
    by_note: dict[str, list[str]] = {}
    for name, e in c.agreement.measures.items():
        if e.note:
            by_note.setdefault(e.note, []).append(measure_label(name))
    notes = [f"{', '.join(names)}: {note}" for note, names in by_note.items()]
    if c.agreement.suggested_note:
        notes.append(f"suggested threshold: {c.agreement.suggested_note}")
    return notes + c.notes


def _ci(e: Estimate | None) -> str:
    return "—" if e is None else interval_text(e.ci_low, e.ci_high)


def _value(e: Estimate | None) -> str:
    return "—" if e is None else score_text(e.value)


def fit_note(run: CalibrationRun) -> str | None:
    """With --fit: whether the scores shown are calibrated or raw (the fit itself always reads raw P(yes))."""
    calibrated = list(dict.fromkeys(c.metric for c in run.results if c.calibrated))
    raw = list(dict.fromkeys(c.metric for c in run.results if c.calibrated is False))
    parts = ([f"calibrated (by {calibration_source(run.meta)}) for {', '.join(calibrated)}"] if calibrated else []) + \
        ([f"the judge's raw P(yes) for {', '.join(raw)}"] if raw else [])
    if not parts:
        return None
    return (f"--fit: the scores shown are {'; '.join(parts)}; the fit reads each item's raw P(yes), so the calibration "
            "in effect is not compounded")


def _warnings(run: CalibrationRun, fit: bool) -> list[str]:
    """The uncalibrated line (as eval shows it) and, with --fit, which scores are raw or calibrated."""
    return [n for n in (uncalibrated_note(run.meta), fit_note(run) if fit else None) if n]


def print_calibration(run: CalibrationRun, console: Console | None = None, fit: bool = False) -> None:
    """The judge and the calibration in effect (the uncalibrated line when it applies, as eval prints it; with fit,
    whether the scores are raw or calibrated), then per file and metric a line of counts and each agreement figure
    with its CI, over the scored rows and with the unscored rows counted wrong."""
    console = console or report_console()
    level = run.meta.get("ci", {}).get("level", 0.95)
    name = (run.meta.get("judge") or {}).get("name", "?")
    console.print(f"judge {escape(str(name))}, calibration: {escape(calibration_source(run.meta))}")
    for line in _warnings(run, fit):
        console.print(f"[yellow]{escape(line)}[/]")
    for c in run.results:
        t = Table(title=f"{escape(c.file)}: {escape(c.metric)} ({escape(c.kind)} labels)", title_justify="left")
        columns: Columns = [("agreement", "left"), ("value", "right"), (f"{percent_text(level)} CI", "right"),
                            ("unscored counted wrong", "right")]
        for col, just in columns:
            t.add_column(col, justify=just)
        for name, e in c.agreement.measures.items():
            wrong = c.agreement.counted_wrong.get(name)
            t.add_row(measure_label(name), _value(e), _ci(e), f"{_value(wrong)} [{_ci(wrong)}]" if wrong and
                      wrong.value is not None else "—")
        console.print(t)
        line = f"rows {rows_text(c)}, scored {c.scored}, unscored {escape(unscored_text(c))}"
        if c.kind == "binary":
            line += f"; suggested threshold {suggested_text(c)}"
        console.print(line + f"; {_seconds(c)} s/sample")
        for note in _why(c):
            console.print(f"  [yellow]note:[/] {escape(note)}")
    judge = run.meta.get("judge") or {}
    if judge:
        console.print(f"judge {escape(str(judge.get('name')))} ({escape(str(judge.get('fingerprint')))}): "
                      f"{sum(c.judge_calls for c in run.results)} calls, "
                      f"{sum(c.cache_hits for c in run.results)} from the cache")


def render_calibration_markdown(run: CalibrationRun, fit: bool = False) -> str:
    meta = run.meta
    judge = meta.get("judge") or {}
    ci = meta.get("ci") or {}
    level = ci.get("level", 0.95)
    lines = [f"### localragas calibrate: judge {cell(judge.get('name', '?'))}", "",
             f"Judge fingerprint `{cell(judge.get('fingerprint', '?'))}`; "
             f"calibration `{cell(calibration_source(meta))}`; "
             f"{percent_text(level)} CIs: percentile bootstrap, {ci.get('resamples', '?')} resamples, "
             f"seed {ci.get('seed', '?')}"
             + (f"; first {meta['limit']} rows of each file" if meta.get("limit") else "") + ".", ""]
    lines += [x for note in _warnings(run, fit) for x in (f"⚠️ {cell(note)}", "")]
    lines += [f"| file | metric | kind | rows | scored | unscored | agreement | value [{percent_text(level)} CI] | "
             "unscored counted wrong | suggested threshold | s/sample |",
             "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    notes: list[str] = []
    for c in run.results:
        for name, e in c.agreement.measures.items():
            lines.append(f"| {cell(Path(c.file).name)} | {cell(c.metric)} | {c.kind} | {rows_text(c)} | {c.scored} | "
                         f"{cell(unscored_text(c))} | {cell(measure_label(name))} | {figure_text(e)} | "
                         f"{figure_text(c.agreement.counted_wrong.get(name))} | {cell(suggested_text(c))} | "
                         f"{_seconds(c)} |")
        notes += [f"- {cell(Path(c.file).name)}, {cell(c.metric)} ({c.kind}): {cell(n)}" for n in _why(c)]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def write_calibration(run: CalibrationRun, json_path: str | Path | None = None,
                      md_path: str | Path | None = None, fit: bool = False, html_path: str | Path | None = None) -> None:
    """The JSON (--out), the Markdown (--md; fit: it says whether the scores are raw or calibrated) and the page of
    plots (--html, report/calibration_html.py)."""
    if json_path:
        write_atomic(json_path, run.model_dump_json(indent=2) + "\n")
    if md_path:
        write_atomic(md_path, render_calibration_markdown(run, fit))
    if html_path:
        from .calibration_html import render_calibration_html  # noqa: PLC0415

        write_atomic(html_path, render_calibration_html(run))


def read_calibration(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> CalibrationRun:
    """A JSON file written by `calibrate --out`; a path that is not a regular file, or one over max_input_bytes, is
    refused before it is opened (localragas.core.inputs)."""
    raw = read_input(Path(path), max_input_bytes, failing(path), "raise the limit with max_input_bytes")
    return CalibrationRun.model_validate_json(raw)
