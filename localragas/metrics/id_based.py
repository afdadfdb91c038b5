"""Context precision and recall from chunk ids, without a judge (ragas IDBasedContextPrecision / Recall).

Needs the sample fields `retrieved_context_ids` (ids of the retrieved chunks, in rank order) and
`reference_context_ids` (ids of the chunks that hold the answer). Ids compare as text; repeats count once.
"""
from __future__ import annotations

from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .context_precision import average_precision
from .registry import register_metric


def _ids(ids: list[str] | None) -> list[str] | None:
    return None if ids is None else list(dict.fromkeys(i for i in ids if i))


class IDBasedContext(Metric):
    """The share of the `over` ids (retrieved: context precision; reference: context recall) that are among the
    other list's ids; a subclass per side (below) is the metric."""

    needs = ("retrieved_context_ids", "reference_context_ids")
    uses_judge = False
    over: str  # retrieved, reference

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


@register_metric
class IDBasedContextPrecision(IDBasedContext):
    name = "id_based_context_precision"
    order = 140
    over = "retrieved"
    definition = "share of the retrieved chunk ids that are among the reference chunk ids (no judge)"
    problem = "retrieval returns chunks that are not among the expected ones"


@register_metric
class IDBasedContextRecall(IDBasedContext):
    name = "id_based_context_recall"
    order = 150
    over = "reference"
    definition = "share of the reference chunk ids that were retrieved (no judge)"
    problem = "retrieval misses chunks that hold the answer"
