"""Short, human-readable reasons behind a sample's score: for gate messages, Markdown, JUnit and assert_gate.

Only pydantic models are touched here (importing it is cheap: the pytest plugin uses it).
"""
from __future__ import annotations

from typing import Any

from .schema import MetricResult, Report, SampleResult

_SNIPPET = 90  # characters of one claim / statement / question shown
_PER_SAMPLE = 3  # claims / statements shown per sample


def _short(text: str, n: int = _SNIPPET) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _quoted(items: list[str]) -> str:
    shown = "; ".join(f'"{_short(t)}"' for t in items[:_PER_SAMPLE])
    return shown + (f" (+{len(items) - _PER_SAMPLE} more)" if len(items) > _PER_SAMPLE else "")


def brief(metric: str, m: MetricResult) -> str:
    """One line of evidence behind a sample's score, by metric; a generic summary for other metrics."""
    if m.value is None:
        return f"unscored: {m.unscored}"
    ev = m.evidence or {}
    note = f" [{_short(ev['note'], 60)}]" if ev.get("note") else ""
    try:
        if metric == "faithfulness" and isinstance(ev.get("claims"), list):
            bad = [c.get("claim", "") for c in ev["claims"] if not c.get("supported")]
            total = len(ev["claims"])
            if not bad:
                return f"all {total} claim(s) supported{note}"
            return f"unsupported {len(bad)}/{total}: {_quoted(bad)}{note}"
        if metric == "context_recall" and isinstance(ev.get("statements"), list):
            bad = [c.get("statement", "") for c in ev["statements"] if not c.get("attributed")]
            total = len(ev["statements"])
            if not bad:
                return f"all {total} reference statement(s) attributed{note}"
            return f"not in the contexts {len(bad)}/{total}: {_quoted(bad)}{note}"
        if metric == "context_precision" and isinstance(ev.get("chunks"), list):
            chunks = ev["chunks"]
            bad = [str(c.get("rank")) for c in chunks if not c.get("relevant")]
            against = f" (judged against the {ev['judged_against']})" if ev.get("judged_against") else ""
            if not bad:
                return f"all {len(chunks)} chunk(s) relevant{against}{note}"
            return f"irrelevant chunk rank(s) {', '.join(bad)} of {len(chunks)}{against}{note}"
        if metric.startswith("noise_sensitivity") and isinstance(ev.get("claims"), list):
            bad = [c.get("claim", "") for c in ev["claims"] if c.get("counted")]
            where = "a relevant" if ev.get("mode") == "relevant" else "only an irrelevant"
            if not bad:
                return f"no incorrect claim supported by {where} context{note}"
            return f"incorrect claims supported by {where} context {len(bad)}/{len(ev['claims'])}: {_quoted(bad)}{note}"
        if metric.startswith(("factual_correctness", "answer_correctness")) and "tp" in ev:
            wrong = [c.get("claim", "") for c in ev.get("answer_claims") or [] if not c.get("in_reference")]
            missed = [c.get("claim", "") for c in ev.get("reference_claims") or [] if not c.get("in_answer")]
            parts = [f"TP {ev['tp']}, FP {ev['fp']}, FN {ev['fn']}"]
            if isinstance(ev.get("similarity"), float):
                parts.append(f"similarity {ev['similarity']:.2f}")
            if wrong:
                parts.append(f"not in the reference: {_quoted(wrong)}")
            if missed:
                parts.append(f"missed: {_quoted(missed)}")
            return "; ".join(parts) + note
        if metric == "context_entity_recall" and isinstance(ev.get("entities"), list):
            bad = [c.get("entity", "") for c in ev["entities"] if not c.get("in_contexts")]
            if not bad:
                return f"all {len(ev['entities'])} entities in the contexts{note}"
            return f"entities not in the contexts {len(bad)}/{len(ev['entities'])}: {_quoted(bad)}{note}"
        if metric == "context_relevance" and isinstance(ev.get("ratings"), list):
            return f"ratings {', '.join(map(str, ev['ratings']))} of 2{note}"
        if metric == "answer_relevancy" and ("noncommittal" in ev or "generated_questions" in ev):
            if ev.get("noncommittal"):
                return f"noncommittal answer (scored 0){note}"
            qs = ev.get("generated_questions") or []
            if not qs:
                return note.strip()
            sims = ", ".join(f"{q.get('similarity', 0):.2f}" for q in qs)
            if ev.get("noncommittal_overruled"):
                note = f"; flagged noncommittal, overruled: the answer replies to the question{note}"
            unanswered = [q.get("question", "") for q in qs if q.get("answered") is False]  # questions=checked
            if unanswered:
                return f"similarities {sims}; not replied to by the answer (counted 0): {_quoted(unanswered)}{note}"
            low = min(qs, key=lambda q: q.get("similarity", 0))
            return f"similarities {sims}; least similar: \"{_short(low.get('question', ''), 70)}\"{note}"
    except (AttributeError, TypeError, KeyError, ValueError):
        pass  # evidence of an unexpected shape: fall through to the generic summary
    return _generic(ev)


def _generic(ev: dict[str, Any]) -> str:
    parts = []
    for k, v in ev.items():
        if isinstance(v, list):
            parts.append(f"{k}: {len(v)} item(s)")
        elif isinstance(v, float):
            parts.append(f"{k}={v:.3g}")
        else:
            parts.append(f"{k}={_short(str(v), 40)}")
        if len(parts) == 4:
            break
    return "; ".join(parts)


def lower_is_better(report: Report, metric: str) -> bool:
    """Is a lower score better for this metric of the report (noise sensitivity)?"""
    return any(s.metric == metric and not s.higher_is_better for s in report.summary)


def metric_label(report: Report, metric: str) -> str:
    """The metric's name, with '(lower is better)' for a metric where a low score is the good one."""
    return f"{metric} (lower is better)" if lower_is_better(report, metric) else metric


def worst_samples(report: Report, metric: str, k: int = 5) -> list[tuple[SampleResult, MetricResult]]:
    """The k worst-scoring samples of a metric (ties by id), scored ones only: the lowest scores, or the highest for a
    metric where lower is better."""
    sign = -1 if lower_is_better(report, metric) else 1
    got = [(s, s.metrics[metric]) for s in report.samples if metric in s.metrics and s.metrics[metric].value is not None]
    return sorted(got, key=lambda p: (sign * p[1].value, p[0].id))[:k]
