"""How a metric's yes/no verdicts are had (its `verdicts` option): one strategy, two implementations. Each gives a
number in [0, 1] per item; an item counts as "yes" from YES.

- probability: one item per call, P(yes) / (P(yes) + P(no)) from the judge's next-token probabilities
  (`Judging.p_yes`, graded).
- json: all items in one call (or a few, to fit the window), a constrained-JSON yes/no each (`Judging.generate`):
  1.0 or 0.0.

The run's calibration (its judging context's Judging.calibration, localragas.judges.calibration_map: the one in effect,
without the families whose prompts changed since the fit, run/judging_context.py) is applied here and only here, by prompt family, to the graded P(yes)
the metrics use: the judge cache below keeps raw P(yes), and the graded items' evidence keeps the raw value beside the
calibrated one (ItemVerdicts.item).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .chunks import answerable_probabilities, chunk_flags, chunk_probabilities, relevance_family
from .support import SUPPORTED, check_items, support_family, support_probabilities

if TYPE_CHECKING:
    from .sample_context import Asking, Scoring

YES = 0.5  # a verdict from which an item counts as supported (relevant)
SUPPORT_FAMILY = support_family()  # the graded prompt families (Prompt.name) a calibration map is keyed by
RELEVANCE_FAMILY = relevance_family("useful")  # "judge_chunk"
ANSWERABLE_FAMILY = "question_answerable"  # the answerability question (generate's check; questions=both)


@dataclass(frozen=True)
class ItemVerdicts:
    """The verdicts on a list of items. values: what the metric uses (graded: the calibrated P(yes) when the judge's
    map covers the family, else the raw P(yes); json: 1.0 / 0.0). raw: the judge's raw P(yes) (graded only)."""

    values: list[float]
    raw: list[float] | None = None
    calibrated: bool = False

    def item(self, i: int, flag: str) -> dict[str, Any]:
        """Item i's verdict fields in the evidence: {flag: value >= YES}, and when graded p_<flag> (the value the
        metric uses) and p_<flag>_raw (the judge's P(yes))."""
        v = self.values[i]
        if self.raw is None:
            return {flag: v >= YES}
        return {flag: v >= YES, f"p_{flag}": round(v, 4), raw_key(flag): round(self.raw[i], 4)}


def raw_key(flag: str) -> str:
    """The evidence key of a graded item's raw P(yes) (ItemVerdicts.item): p_supported_raw for the flag supported."""
    return f"p_{flag}_raw"


def raw_p_yes(item: Mapping[str, Any]) -> float | None:
    """The judge's raw P(yes) a graded item of a metric's evidence kept (its raw_key, whatever its flag: supported,
    attributed, relevant), e.g. an item of a `calibrate --out` row; None for an item without one (JSON verdicts)."""
    for key, value in item.items():
        if key.startswith("p_") and key.endswith("_raw"):
            return float(value)
    return None


def graded(ctx: "Asking", family: str, raw: list[float], judged: bool = True) -> ItemVerdicts:
    """The raw P(yes) of `family` and their calibrated values (unchanged without a map for the family). judged=False:
    no call was made (no texts to judge against), the zeros are not P(yes) and are not mapped."""
    cal = ctx.judging.calibration
    if not (judged and cal is not None and cal.covers(family)):
        return ItemVerdicts(list(raw), list(raw))
    return ItemVerdicts(cal.apply(family, raw), list(raw), calibrated=True)


class Verdicts(ABC):
    name: str
    description: str
    graded: bool  # a probability per item (reported beside the yes/no), not a yes/no only

    @abstractmethod
    def support(self, ctx: "Scoring", items: list[str], against: list[str], question: str = SUPPORTED,
                notes: list[dict] | None = None) -> ItemVerdicts:
        """For each item (a claim, a statement), do the texts `against` (the contexts) support it? No texts: 0 each, no
        call. `question`: how a graded verdict is asked (judge_calls/support.py QUESTIONS; JSON verdicts take the
        default only); `notes`: one dict per item, given what that question keeps for its evidence."""

    @abstractmethod
    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str],
                  questions: str = "useful", notes: list[dict] | None = None) -> ItemVerdicts:
        """For each retrieved chunk, is it useful for the target (the reference answer, the answer, or the question
        alone: `kind`)? questions=both (graded only, judge_calls/chunks.py CHUNK_QUESTIONS): also, does it state the
        answer to the question; `notes`: one dict per chunk, given each question's raw P(yes)."""


class ProbabilityVerdicts(Verdicts):
    name = "probability"
    description = ("one item per call, scored P(yes) / (P(yes) + P(no)) from the judge's next-token probabilities "
                   "(graded; the default: closer to human labels, docs/accuracy.md)")
    graded = True

    def support(self, ctx: "Scoring", items: list[str], against: list[str], question: str = SUPPORTED,
                notes: list[dict] | None = None) -> ItemVerdicts:
        return graded(ctx, support_family(question), support_probabilities(ctx, items, against, question, notes),
                      judged=bool(against))

    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str],
                  questions: str = "useful", notes: list[dict] | None = None) -> ItemVerdicts:
        useful = chunk_probabilities(ctx, question, target, kind, chunks)
        if questions == "useful":
            return graded(ctx, RELEVANCE_FAMILY, useful)
        answers = answerable_probabilities(ctx, question, chunks)
        for note, p, q in zip(notes or [], useful, answers):
            note.update(p_useful_raw=round(p, 4), p_answerable_raw=round(q, 4))
        return graded(ctx, relevance_family(questions), [(p + q) / 2 for p, q in zip(useful, answers)])


class JsonVerdicts(Verdicts):
    name = "json"
    description = "all items in one call, a constrained-JSON yes/no each (the RAGAS way)"
    graded = False

    def support(self, ctx: "Scoring", items: list[str], against: list[str], question: str = SUPPORTED,
                notes: list[dict] | None = None) -> ItemVerdicts:
        assert question == SUPPORTED, "JSON verdicts ask one question (metrics refuse question=both with verdicts=json)"
        return ItemVerdicts([1.0 if f else 0.0 for f in check_items(ctx, items, against)])

    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str],
                  questions: str = "useful", notes: list[dict] | None = None) -> ItemVerdicts:
        assert questions == "useful", "JSON verdicts ask one question (context precision refuses questions=both)"
        return ItemVerdicts([1.0 if f else 0.0 for f in chunk_flags(ctx, question, target, kind, chunks)])


VERDICTS: dict[str, Verdicts] = {v.name: v for v in (ProbabilityVerdicts(), JsonVerdicts())}
DEFAULT_VERDICTS = "probability"
