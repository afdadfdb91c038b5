"""Context precision and recall from chunk ids, without a judge (ragas IDBasedContextPrecision / Recall).

Needs the sample fields `retrieved_context_ids` (ids of the retrieved chunks, in rank order) and
`reference_context_ids` (ids of the chunks that hold the answer). Ids compare as text; repeats count once.
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

from ..schema import MetricResult
from ..scoring import Scoring
from .base import Metric
from .context_precision import average_precision


def _ids(ids: list[str] | None) -> list[str] | None:
    return None if ids is None else list(dict.fromkeys(i for i in ids if i))


class _IDBasedMetric(Metric):
    """The share of the `over` ids (retrieved or reference) that are among the other list's ids."""

    needs = ("retrieved_context_ids", "reference_context_ids")
    uses_judge = False
    over: str  # "retrieved" or "reference"

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        ids = {"reference": _ids(sample.reference_context_ids), "retrieved": _ids(sample.retrieved_context_ids)}
        for name, found in ids.items():  # reference first; the `over` list must be non-empty, the other present
            if found is None or (name == self.over and not found):
                return MetricResult.unscored_because(f"no_{name}_context_ids")
        other = set(ids["reference" if self.over == "retrieved" else "retrieved"])
        flags = [i in other for i in ids[self.over]]
        return MetricResult.fraction(flags, **self.evidence(ids[self.over], flags))

    @abstractmethod
    def evidence(self, ids: list[str], flags: list[bool]) -> dict[str, Any]:
        """The evidence for the `over` ids and whether each is among the other list's."""


class IDBasedContextPrecision(_IDBasedMetric):
    name = "id_based_context_precision"
    over = "retrieved"
    definition = "share of the retrieved chunk ids that are among the reference chunk ids (no judge)"
    problem = "retrieval returns chunks that are not among the expected ones"

    def evidence(self, ids: list[str], flags: list[bool]) -> dict[str, Any]:
        return {"retrieved": [{"rank": k, "id": i, "relevant": f} for k, (i, f) in enumerate(zip(ids, flags), 1)],
                "average_precision": average_precision(flags)}


class IDBasedContextRecall(_IDBasedMetric):
    name = "id_based_context_recall"
    over = "reference"
    definition = "share of the reference chunk ids that were retrieved (no judge)"
    problem = "retrieval misses chunks that hold the answer"

    def evidence(self, ids: list[str], flags: list[bool]) -> dict[str, Any]:
        return {"reference": [{"id": i, "retrieved": f} for i, f in zip(ids, flags)]}
