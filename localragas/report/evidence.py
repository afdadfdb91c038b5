"""Short, human-readable reasons behind a sample's score: for gate messages, Markdown, JUnit and assert_gate.

How a metric's evidence is summed up is its definition's `summary` (data/metric_definition.py): a kind of SUMMARIES
with its parameters, read from the report, so a stored report is summarised as it was made.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.number_text import score_text
from ..data.metric_definition import MetricDefinition
from ..metrics.report_definitions import definitions_of, known_definition
from ..data.schema import MetricResult, Report, SampleResult
from ..run.score_columns import ScoreColumns

_SNIPPET = 90  # characters of one claim / statement / question shown
_PER_SAMPLE = 3  # claims / statements shown per sample


def short(text: str, n: int = _SNIPPET) -> str:
    """The text on one line, at most n characters (a cut ends with "…")."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _quoted(items: list[str]) -> str:
    shown = "; ".join(f'"{short(t)}"' for t in items[:_PER_SAMPLE])
    return shown + (f" (+{len(items) - _PER_SAMPLE} more)" if len(items) > _PER_SAMPLE else "")


def _items(ev: dict[str, Any], spec: dict[str, Any], note: str) -> str | None:
    rows = ev.get(spec["items"])
    if not isinstance(rows, list):
        return None
    bad = [c.get(spec["text"], "") for c in rows if bool(c.get(spec["flag"])) == spec.get("bad_when", False)]
    if not bad:
        return spec["all_good"].format(total=len(rows)) + note
    return f"{spec['some_bad'].format(bad=len(bad), total=len(rows))}: {_quoted(bad)}{note}"


def _chunks(ev: dict[str, Any], spec: dict[str, Any], note: str) -> str | None:
    if not isinstance(ev.get("chunks"), list):
        return None
    chunks = ev["chunks"]
    bad = [str(c.get("rank")) for c in chunks if not c.get("relevant")]
    against = f" (judged against the {ev['judged_against']})" if ev.get("judged_against") else ""
    if not bad:
        return f"all {len(chunks)} chunk(s) relevant{against}{note}"
    return f"irrelevant chunk rank(s) {', '.join(bad)} of {len(chunks)}{against}{note}"


def _claim_counts(ev: dict[str, Any], spec: dict[str, Any], note: str) -> str | None:
    if "tp" not in ev:
        return None
    wrong = [c.get("claim", "") for c in ev.get("answer_claims") or [] if not c.get("in_reference")]
    missed = [c.get("claim", "") for c in ev.get("reference_claims") or [] if not c.get("in_answer")]
    parts = [f"TP {ev['tp']}, FP {ev['fp']}, FN {ev['fn']}"]
    if isinstance(ev.get("similarity"), float):
        parts.append(f"similarity {score_text(ev['similarity'], digits=2)}")
    if wrong:
        parts.append(f"not in the reference: {_quoted(wrong)}")
    if missed:
        parts.append(f"missed: {_quoted(missed)}")
    return "; ".join(parts) + note


def _ratings(ev: dict[str, Any], spec: dict[str, Any], note: str) -> str | None:
    if not isinstance(ev.get("ratings"), list):
        return None
    return f"ratings {', '.join(map(str, ev['ratings']))} of 2{note}"


def _questions(ev: dict[str, Any], spec: dict[str, Any], note: str) -> str | None:
    if "noncommittal" not in ev and "generated_questions" not in ev:
        return None
    if ev.get("noncommittal"):
        return f"noncommittal answer (scored 0){note}"
    qs = ev.get("generated_questions") or []
    if not qs:
        return note.strip()
    sims = ", ".join(score_text(q.get("similarity", 0), digits=2) for q in qs)
    if ev.get("noncommittal_overruled"):
        note = f"; flagged noncommittal, overruled: the answer replies to the question{note}"
    unanswered = [q.get("question", "") for q in qs if q.get("answered") is False]  # questions=checked
    if unanswered:
        return f"similarities {sims}; not replied to by the answer (counted 0): {_quoted(unanswered)}{note}"
    low = min(qs, key=lambda q: q.get("similarity", 0))
    return f"similarities {sims}; least similar: \"{short(low.get('question', ''), 70)}\"{note}"


# MetricDefinition.summary["kind"] -> the summariser; each returns None for evidence not of its shape
SUMMARIES: dict[str, Callable[[dict[str, Any], dict[str, Any], str], str | None]] = {
    "items": _items,  # metric_definition.item_summary
    "chunks": _chunks,
    "claim_counts": _claim_counts,
    "ratings": _ratings,
    "questions": _questions,
}


def brief(metric: str | MetricDefinition, m: MetricResult) -> str:
    """One line of evidence behind a sample's score, as the metric's definition says to sum it up (a name: the
    registry's definition); a generic summary for a metric without one, or for evidence of another shape."""
    if m.value is None:
        return f"unscored: {m.unscored}"
    spec = (known_definition(metric) if isinstance(metric, str) else metric).summary
    ev = m.evidence or {}
    note = f" [{short(ev['note'], 60)}]" if ev.get("note") else ""
    summarise = SUMMARIES.get(spec.get("kind", ""))
    try:
        got = summarise(ev, spec, note) if summarise else None
    except (AttributeError, TypeError, KeyError, ValueError, IndexError):
        got = None  # evidence (or a stored summary) of an unexpected shape: the generic summary
    return _generic(ev) if got is None else got


def _generic(ev: dict[str, Any]) -> str:
    parts = []
    for k, v in ev.items():
        if isinstance(v, list):
            parts.append(f"{k}: {len(v)} item(s)")
        elif isinstance(v, float):
            parts.append(f"{k}={v:.3g}")
        else:
            parts.append(f"{k}={short(str(v), 40)}")
        if len(parts) == 4:
            break
    return "; ".join(parts)


def definition_in(report: Report, metric: str) -> MetricDefinition:
    """The report's definition of one of its metrics (definitions_of), or the registry's for another name."""
    return definitions_of(report).get(metric) or known_definition(metric)


def lower_is_better(report: Report, metric: str) -> bool:
    """Is a lower score better for this metric of the report (noise sensitivity), by the report's definition?"""
    return not definition_in(report, metric).higher_is_better


def metric_label(report: Report, metric: str) -> str:
    """The metric's name, with '(lower is better)' for a metric where a low score is the good one."""
    return f"{metric} (lower is better)" if lower_is_better(report, metric) else metric


def worst_samples(report: Report, metric: str, k: int = 5) -> list[tuple[SampleResult, MetricResult]]:
    """The k worst-scoring samples of a metric (ties by id), scored ones only: the lowest scores, or the highest for a
    metric where lower is better."""
    sign = -1 if lower_is_better(report, metric) else 1
    samples = report.samples
    candidates = _lowest_positions(samples, metric, sign, k)
    if candidates is not None:  # a large run's: the few lowest (ties and all) read from disk, not every sample
        samples = [report.samples[int(i)] for i in candidates]
    got = ((s, s.metrics[metric]) for s in samples if metric in s.metrics and s.metrics[metric].value is not None)
    return heapq.nsmallest(k, got, key=lambda p: (sign * (p[1].value or 0.0), p[0].id))  # k held, not every sample


_CANDIDATES = 10_000  # at most this many samples tied among the lowest are read back by position


def _lowest_positions(samples: Any, metric: str, sign: int, k: int) -> Any:
    """The positions of the samples whose score is among the k lowest (sign * value, ties included), from the score
    columns a large run's results carry (run/score_columns.py); None when they carry none or too many tie."""
    columns = getattr(samples, "columns", None)
    if k < 1 or not isinstance(columns, ScoreColumns) or metric not in columns.metrics:
        return None
    n = len(columns)
    c = columns.columns[metric]
    keys = np.where(c.scored[:n], sign * c.value[:n], np.inf)
    scored = int(c.scored[:n].sum())
    if scored == 0:
        return []
    kth = np.partition(keys, min(k, scored) - 1)[min(k, scored) - 1]
    found = np.flatnonzero(keys <= kth)
    return found if len(found) <= _CANDIDATES else None
