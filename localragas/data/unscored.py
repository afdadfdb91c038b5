"""Unscored reasons: what kind each is, whether an error caused it, and which say that a metric does not apply.

A metric a sample cannot be scored on carries a reason (MetricResult.unscored) instead of a value. Reasons named
no_<what> (no_reference, no_claims, no_contexts...) are missing data: the metric is not evaluated there. Any other
reason, or none, is an error (a judge, cache, embedder or I/O failure): the gate fails closed on it.
"""
from __future__ import annotations

# Reasons that say a metric does not apply to a turn, not that data is missing: knowledge retention on a turn with no
# earlier user message, conversation completeness before its conversation's last turn (scored once, there), a
# conversation metric on a single question-answer sample. A conversation's summary counts them apart
# (data/conversation_summary.py); docs/conversations.md.
NOT_APPLICABLE = frozenset({"no_conversation", "no_earlier_turn", "no_conversation_end"})


def reason_kind(reason: str) -> str:
    """'judge_error: reply truncated …' -> 'judge_error'."""
    return reason.split(":", 1)[0].strip()


def is_error_reason(reason: str | None) -> bool:
    """An unscored reason that an error caused (judge_error, error: a judge, cache, embedder or I/O failure), not
    missing data. Data reasons are named no_<what> (no_reference, no_claims, no_contexts…); any other reason, or
    none, counts as an error: the gate fails closed."""
    return not reason_kind(reason or "").startswith("no_")
