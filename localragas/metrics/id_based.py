"""Context precision and recall from chunk ids, without a judge (ragas IDBasedContextPrecision / Recall).

Needs the sample fields `retrieved_context_ids` (ids of the retrieved chunks, in rank order) and
`reference_context_ids` (ids of the chunks that hold the answer). Ids compare as text; repeats count once.
"""
from __future__ import annotations

from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .context_precision import average_precision

# over -> (name, definition, problem): the ids whose share is measured, among the other list's
_OVER = {
    "retrieved": ("id_based_context_precision",
                  "share of the retrieved chunk ids that are among the reference chunk ids (no judge)",
                  "retrieval returns chunks that are not among the expected ones"),
    "reference": ("id_based_context_recall", "share of the reference chunk ids that were retrieved (no judge)",
                  "retrieval misses chunks that hold the answer"),
}


def _ids(ids: list[str] | None) -> list[str] | None:
    return None if ids is None else list(dict.fromkeys(i for i in ids if i))


class IDBasedContext(Metric):
    """The share of the `over` ids (retrieved: context precision; reference: context recall) that are among the
    other list's ids."""

    needs = ("retrieved_context_ids", "reference_context_ids")
    uses_judge = False

    def __init__(self, over: str):
        self.over = over
        self.name, self.definition, self.problem = _OVER[over]

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        ids = {"reference": _ids(sample.reference_context_ids), "retrieved": _ids(sample.retrieved_context_ids)}
        for name, found in ids.items():  # reference first; the `over` list must be non-empty, the other present
            if found is None or (name == self.over and not found):
                return MetricResult.unscored_because(f"no_{name}_context_ids")
        other = set(ids["reference" if self.over == "retrieved" else "retrieved"])
        flags = [i in other for i in ids[self.over]]
        if self.over == "reference":
            return MetricResult.fraction(flags, reference=[{"id": i, "retrieved": f}
                                                           for i, f in zip(ids["reference"], flags)])
        ranked = [{"rank": k, "id": i, "relevant": f} for k, (i, f) in enumerate(zip(ids["retrieved"], flags), 1)]
        return MetricResult.fraction(flags, retrieved=ranked, average_precision=average_precision(flags))
