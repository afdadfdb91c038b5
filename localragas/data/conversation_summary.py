"""A report's conversations, one row each (docs/conversations.md#reports-intervals-and-the-gate): its turns, each
metric's mean over its scored turns and its worst turn (value and id), how many turns the metric does not apply to
(conversation_models.NOT_APPLICABLE: not missing data) and how many it left unscored otherwise. Conversation
completeness, scored once on the last turn, is then that turn's value; knowledge retention the mean of its turns.

The one place every report format takes its conversations from (terminal, JSON, CSV, Markdown, JUnit, MLflow, the
frames). Read as the results stream, in one pass: a conversation is given once all its turns have come (its turns
are next to each other in a run), in the order conversations first appear, so that memory holds about one
conversation, however large the report. Single question-answer samples are in no conversation and no row.
"""
from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..core.number_text import score_text
from .unscored import NOT_APPLICABLE, is_error_reason, reason_kind

if TYPE_CHECKING:
    from .schema import Report, SampleResult

WORST_SHOWN = 5  # conversations the terminal and Markdown reports list, the worst first


class ConversationMetric(BaseModel):
    """One metric over a conversation's turns."""

    mean: float | None = None  # over its scored turns (None: none scored)
    scored: int = 0
    worst: float | None = None  # its worst scored turn's value: the lowest (the highest when lower is better)
    worst_turn: str | None = None  # that turn's id (the first of equal ones)
    not_applicable: int = 0  # turns the metric does not apply to (NOT_APPLICABLE reasons): not missing data
    unscored: int = 0  # turns unscored for want of data (no_reference, ...) or by an error
    errors: int = 0  # of them, by an error (a judge, cache, embedder or I/O failure)


class ConversationSummary(BaseModel):
    """One conversation of a report: its turns and each metric over them."""

    conversation: str
    turns: int  # the conversation's scored turns (TurnResult.turns)
    turn_ids: list[str] = Field(default_factory=list)  # its turns in the report, in order
    category: str | None = None  # its first turn's
    metrics: dict[str, ConversationMetric] = Field(default_factory=dict)


def has_conversations(report: "Report") -> bool:
    """Whether the report's results hold turns of conversations, as its gate recorded (meta.conversations): a report
    of single samples is never read again for conversations."""
    return bool(report.meta.get("conversations"))


def lower_metrics(report: "Report") -> set[str]:
    """The report's metrics whose low score is the good one."""
    return ({s.metric for s in report.summary if not s.higher_is_better}
            | {m for m, d in report.definitions.items() if not d.higher_is_better})


def summarise(conversation: str, turns: list["SampleResult"], metrics: list[str],
              lower: Collection[str] = ()) -> ConversationSummary:
    """One conversation's row from its turns' results (in order)."""
    out: dict[str, ConversationMetric] = {}
    for name in metrics:
        m, values = ConversationMetric(), []
        for t in turns:
            r = t.metrics.get(name)
            if r is None:
                continue
            if r.value is not None:
                values.append(r.value)
                worse = m.worst is None or (r.value > m.worst if name in lower else r.value < m.worst)
                if worse:
                    m.worst, m.worst_turn = r.value, t.id
            elif reason_kind(r.unscored or "") in NOT_APPLICABLE:
                m.not_applicable += 1
            else:
                m.unscored += 1
                m.errors += is_error_reason(r.unscored)
        m.scored = len(values)
        m.mean = round(sum(values) / len(values), 6) if values else None
        out[name] = m
    first = turns[0]
    return ConversationSummary(conversation=conversation, turns=first.turn.turns if first.turn else len(turns),
                               turn_ids=[t.id for t in turns], category=first.category, metrics=out)


def conversation_groups(results: Iterable["SampleResult"]) -> Iterator[tuple[str, list["SampleResult"]]]:
    """(conversation, its turns' results in order) in the order conversations first appear, each as soon as its turns
    have all come (and those before it); a conversation some of whose turns are not in the results (a run cut short)
    at the end. Results in no conversation are passed over."""
    open_: dict[str, list[SampleResult]] = {}
    for r in results:
        if r.turn is None:
            continue
        open_.setdefault(r.turn.conversation, []).append(r)
        while open_:
            name, turns = next(iter(open_.items()))
            if turns[0].turn is None or len(turns) < turns[0].turn.turns:
                break
            del open_[name]
            yield name, sorted(turns, key=lambda t: t.turn.turn if t.turn else 0)
    for name, turns in open_.items():
        yield name, sorted(turns, key=lambda t: t.turn.turn if t.turn else 0)


def conversation_summaries(report: "Report") -> Iterator[ConversationSummary]:
    """Each conversation of the report (summarise), as its results stream (conversation_groups)."""
    if not has_conversations(report):
        return
    lower = lower_metrics(report)
    for name, turns in conversation_groups(report.samples):
        yield summarise(name, turns, report.metrics, lower)


def badness(row: ConversationSummary, lower: set[str]) -> tuple[int, float]:
    """How a conversation ranks among the worst, smallest first: one with a turn an error left unscored first, then
    by its lowest mean of any metric (1 - the mean for a lower-is-better one); one with no mean last."""
    means = [1.0 - m.mean if name in lower else m.mean for name, m in row.metrics.items() if m.mean is not None]
    return (0 if any(m.errors for m in row.metrics.values()) else 1, min(means, default=float("inf")))


def worst_conversations(report: "Report", n: int = WORST_SHOWN) -> tuple[list[ConversationSummary], int]:
    """(the n worst conversations, worst first (badness; ties in the report's order), how many conversations in
    all), in one pass holding n rows."""
    lower = lower_metrics(report)
    heap: list[tuple[tuple[int, float], int, ConversationSummary]] = []
    count = 0
    for count, row in enumerate(conversation_summaries(report), 1):
        key = badness(row, lower)
        item = ((-key[0], -key[1]), -count, row)  # a max-heap of the n worst: the least bad of them on top
        if len(heap) < n:
            heapq.heappush(heap, item)
        elif n and item > heap[0]:
            heapq.heapreplace(heap, item)
    return [row for _, _, row in sorted(heap, reverse=True)], count


def worst_turn(row: ConversationSummary, lower: set[str]) -> tuple[str, str, float] | None:
    """(metric, turn id, value) of the conversation's worst turn over every metric (the lowest score, a
    lower-is-better one's turned over), None without a scored turn."""
    got = [(1.0 - m.worst if name in lower else m.worst, name, m.worst_turn, m.worst)
           for name, m in row.metrics.items() if m.worst is not None and m.worst_turn is not None]
    if not got:
        return None
    _, name, turn, value = min(got, key=lambda g: g[0])
    return name, turn, value


NOT_APPLICABLE_TEXT = "n/a"  # a metric that applies to no turn of a conversation, as the reports write its mean


def mean_text(m: ConversationMetric) -> str:
    """A conversation's mean of one metric as the reports write it: '0.812'; 'n/a' when the metric applies to none of
    its turns (conversation completeness cut short, knowledge retention on a one-turn conversation); '—' when turns
    it applies to were left unscored."""
    if m.mean is None and m.not_applicable and not m.unscored:
        return NOT_APPLICABLE_TEXT
    return score_text(m.mean)


def worst_turn_text(row: ConversationSummary, lower: set[str]) -> str:
    """'plans#2: context_precision 0.333', the conversation's worst turn (worst_turn); '' without a scored turn."""
    got = worst_turn(row, lower)
    return f"{got[1]}: {got[0]} {score_text(got[2])}" if got else ""


def worst_title(shown: int, count: int) -> str:
    """The heading of a list of the worst conversations: 'conversations: the 5 worst of 120 (...)'."""
    which = f"the {shown} worst of {count}" if shown < count else f"{count}, the worst first"
    return f"conversations: {which} (by the lowest mean of any metric; every one in the JSON report)"
