"""A Markdown summary fit for a pull-request comment: verdict, per-metric table with intervals, worst samples, and the
worst conversations when the samples are turns of conversations."""
from __future__ import annotations

from pathlib import Path

from ..judges.calibration_map import uncalibrated_note
from ..core.number_text import interval_text, score_text, seconds_text, threshold_text
from ..data.conversation_summary import lower_metrics, mean_text, worst_conversations, worst_title, worst_turn_text
from ..data.report_views import ignored_line
from ..data.schema import Report, SampleResult
from ..core.atomic_write import write_atomic
from ..run.canaries import canary_line
from ..run.judge_check import check_details, check_line
from .evidence import brief, definition_in, metric_label, short, worst_samples
from .spot_checks_terminal import reading_text

QUESTION_CHARS = 80  # characters of a worst sample's question shown
_ICON = {"passed": "✅ pass", "failed": "❌ FAIL", "not_evaluated": "⚠️ not evaluated", "error": "🛑 ERROR"}


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks, no HTML or autolinks from sample text."""
    s = " ".join(str(text).split())
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("<", "&lt;"), (">", "&gt;"), ("`", "\\`"), ("*", "\\*"),
                 ("_", "\\_"), ("[", "\\["), ("]", "\\]")):
        s = s.replace(a, b)
    return s


def _question(s: SampleResult) -> str:
    return cell(short(s.input.question, QUESTION_CHARS)) if s.input is not None else ""


def render_markdown(report: Report, worst: int = 3) -> str:
    gate = {g.metric: g for g in report.gate.results}
    n = report.meta.get("samples", len(report.samples))
    if not report.gate.enabled:
        head = "quality gate off"
    else:
        head = "✅ quality gate passed" if report.gate.passed else "❌ quality gate FAILED"
    if not report.gate.evaluated:
        head += " — 🛑 could not evaluate"
    on = " (on the 95% CI lower bound)" if report.gate.on == "lower-bound" else ""
    lines = [f"### localragas: {head}{on}", "", f"{n} samples · judge `{cell((report.meta.get('judge') or {}).get('name', '?'))}`", ""]
    if line := check_line(report.meta):
        details = check_details(report.meta)
        lines += [cell(line) + (f" <sub>{cell(details)}</sub>" if details else ""), ""]
    if line := canary_line(report.meta):
        lines += [cell(line), ""]
    if note := uncalibrated_note(report.meta):
        lines += [f"⚠️ {cell(note)}", ""]
    lines += ["| metric | mean | 95% CI | scored | unscored | threshold | verdict |", "|---|---:|---:|---:|---:|---:|---|"]
    for s in report.summary:
        g = gate.get(s.metric)
        reasons = ", ".join(f"{k} {v}" for k, v in s.unscored_reasons.items())
        lines.append(f"| {cell(metric_label(report, s.metric))} | {score_text(s.mean)} | "
                     f"{interval_text(s.ci_low, s.ci_high, form='spaced')} | {s.scored} | "
                     f"{s.unscored}{f' ({cell(reasons)})' if reasons else ''} | {threshold_text(g.threshold) if g else '—'} | "
                     f"{_ICON[g.status] if g and report.gate.enabled else ''} |")
    lines += _checked(report)
    if report.gate.errors:
        title = ("**Could not evaluate**: errors (judge, cache, embedder, I/O) left samples unscored; the gate fails "
                 "closed." if not report.gate.evaluated else "**Errors accepted** (within the max error rate):")
        lines += ["", title, ""]
        lines += [f"- {'⚠️' if x.allowed else '🛑'} {cell(x.message)}" for x in report.gate.errors]
    failed = [g for g in report.gate.results if g.status == "failed"] if report.gate.enabled else []
    for g in failed:
        lines += ["", f"**{cell(g.metric)}**: {cell(g.message)}", ""]
        rows, defined = worst_samples(report, g.metric, worst), definition_in(report, g.metric)
        if rows:
            asked = any(s.input is not None for s, _ in rows)  # the question too, when the run kept the text
            lines += ["| sample | " + ("question | " if asked else "") + "score | why |",
                      "|---|" + ("---|" if asked else "") + "---:|---|"]
            lines += [f"| {cell(s.id)} | " + (f"{_question(s)} | " if asked else "")
                      + f"{score_text(r.value)} | {cell(brief(defined, r))} |" for s, r in rows]
    lines += _conversations(report)
    if report.by_category:
        lines += ["", "<details><summary>by category</summary>", "",
                  "| category | " + " | ".join(cell(m) for m in report.metrics) + " |",
                  "|---|" + "---:|" * len(report.metrics)]
        for cat, summaries in report.by_category.items():
            lines.append(f"| {cell(cat)} | " + " | ".join(score_text(r.mean) for r in summaries) + " |")
        lines += ["", "</details>"]
    if report.skipped:
        lines += ["", f"{len(report.skipped)} invalid input row(s) skipped."]
    if ignored := ignored_line(report.meta):
        lines += ["", f"{cell(ignored)} (no field reads them)."]
    stats = report.meta.get("judge_stats") or {}
    if stats:
        lines += ["", f"<sub>{stats['calls']} judge calls ({stats.get('cache_hits', 0)} cached, {stats['failed_calls']} failed), "
                      f"{seconds_text(report.meta.get('wall_seconds', 0), digits=0)} wall · "
                      f"localragas {report.meta.get('localragas', '')}</sub>"]
    return "\n".join(lines) + "\n"


def _conversations(report: Report) -> list[str]:
    """The worst conversations (data/conversation_summary.py), when the results are turns of conversations: each
    metric's mean over a conversation's turns and its worst turn."""
    rows, count = worst_conversations(report)
    if not rows:
        return []
    lower = lower_metrics(report)
    lines = ["", f"**{cell(worst_title(len(rows), count))}**", "",
             "| conversation | turns | " + " | ".join(cell(m) for m in report.metrics) + " | worst turn |",
             "|---|---:|" + "---:|" * len(report.metrics) + "---|"]
    lines += [f"| {cell(r.conversation)} | {r.turns} | " + " | ".join(mean_text(r.metrics[m]) for m in report.metrics)
              + f" | {cell(worst_turn_text(r, lower))} |" for r in rows]
    return lines


def _checked(report: Report) -> list[str]:
    """The "checked by people" table in brief (report.spot_checks): labels, the judge against the people, the three
    means with intervals and the gate's three-way reading."""
    checks = report.spot_checks
    if checks is None or not checks.metrics:
        return []

    def mean(p) -> str:
        return "—" if p.mean is None else f"{score_text(p.mean)} {interval_text(p.ci_low, p.ci_high, form='spaced')}"

    lines = ["", f"**Checked by people** ({checks.labels} label(s)):", "",
             "| metric | labelled | accuracy | bal. acc. | ROC AUC | judge only | labels only | prediction-powered | "
             "gate |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, c in checks.metrics.items():
        reading = reading_text(c) if c.trustworthy else f"not used by the gate: {c.note or ''}"
        lines.append(f"| {cell(name)} | {c.draws} | {score_text(c.accuracy.value)} | "
                     f"{score_text(c.balanced_accuracy.value)} | {score_text(c.roc_auc.value)} | {mean(c.judge_mean)} | "
                     f"{mean(c.labels_mean)} | {mean(c.ppi_mean)} | {cell(reading)} |")
    return lines


def write_markdown(report: Report, path: str | Path) -> None:
    write_atomic(path, render_markdown(report))
