"""How a metric's yes/no verdicts are had (its `verdicts` option): one strategy, two implementations. Each gives a
number in [0, 1] per item; an item counts as "yes" from YES.

- probability: one item per call, P(yes) / (P(yes) + P(no)) from the judge's next-token probabilities
  (`Judge.p_yes`, graded).
- json: all items in one call (or a few, to fit the window), a constrained-JSON yes/no each (`Judge.generate`):
  1.0 or 0.0.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .chunks import chunk_flags, chunk_probabilities
from .support import check_items, support_probabilities
from .ways import PLAIN, Way

if TYPE_CHECKING:
    from ..scoring import Scoring

YES = 0.5  # a verdict from which an item counts as supported (relevant)


class Verdicts(ABC):
    name: str
    description: str
    graded: bool  # a probability per item (reported beside the yes/no), not a yes/no only

    @abstractmethod
    def support(self, ctx: "Scoring", items: list[str], against: list[str], way: Way = PLAIN,
                notes: list[dict] | None = None) -> list[float]:
        """For each item (a claim, a statement), do the texts `against` (the contexts) support it? No texts: 0 each,
        no call. `way`: how a graded verdict is asked (asking/ways.py; JSON verdicts take the default only);
        `notes`: one dict per item, given what the way keeps for its evidence."""

    @abstractmethod
    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str]) -> list[float]:
        """For each retrieved chunk, is it useful for the target (the reference answer, the answer, or the question
        alone: `kind`)?"""


class ProbabilityVerdicts(Verdicts):
    name = "probability"
    description = ("one item per call, scored P(yes) / (P(yes) + P(no)) from the judge's next-token probabilities "
                   "(graded; the default: closer to human labels, docs/accuracy.md)")
    graded = True

    def support(self, ctx: "Scoring", items: list[str], against: list[str], way: Way = PLAIN,
                notes: list[dict] | None = None) -> list[float]:
        return support_probabilities(ctx, items, against, way, notes)

    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str]) -> list[float]:
        return chunk_probabilities(ctx, question, target, kind, chunks)


class JsonVerdicts(Verdicts):
    name = "json"
    description = "all items in one call, a constrained-JSON yes/no each (the RAGAS way)"
    graded = False

    def support(self, ctx: "Scoring", items: list[str], against: list[str], way: Way = PLAIN,
                notes: list[dict] | None = None) -> list[float]:
        assert way == PLAIN, "JSON verdicts are asked one way only (metrics refuse the graded ways with verdicts=json)"
        return [1.0 if f else 0.0 for f in check_items(ctx, items, against)]

    def relevance(self, ctx: "Scoring", question: str, target: str, kind: str, chunks: list[str]) -> list[float]:
        return [1.0 if f else 0.0 for f in chunk_flags(ctx, question, target, kind, chunks)]


VERDICTS: dict[str, Verdicts] = {v.name: v for v in (ProbabilityVerdicts(), JsonVerdicts())}
DEFAULT_VERDICTS = "probability"
