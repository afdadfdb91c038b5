"""Context precision and recall from chunk ids, without a judge (ragas IDBasedContextPrecision / Recall).

Needs the sample fields `retrieved_context_ids` (ids of the retrieved chunks, in rank order) and
`reference_context_ids` (ids of the chunks that hold the answer). Ids compare as text; repeats count once.
"""
from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import Metric, register
from .context_precision import average_precision


def _ids(ids: list[str] | None) -> list[str] | None:
    return None if ids is None else list(dict.fromkeys(i for i in ids if i))


class IDBasedContextPrecision(Metric):
    name = "id_based_context_precision"
    needs = ("retrieved_context_ids", "reference_context_ids")
    uses_judge = False
    definition = "share of the retrieved chunk ids that are among the reference chunk ids (no judge)"
    problem = "retrieval returns chunks that are not among the expected ones"

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        retrieved, reference = _ids(sample.retrieved_context_ids), _ids(sample.reference_context_ids)
        if reference is None:
            return MetricResult.unscored_because("no_reference_context_ids")
        if not retrieved:
            return MetricResult.unscored_because("no_retrieved_context_ids")
        wanted = set(reference)
        flags = [i in wanted for i in retrieved]
        return MetricResult.fraction(flags, retrieved=[{"rank": k, "id": i, "relevant": f}
                                                       for k, (i, f) in enumerate(zip(retrieved, flags), 1)],
                                     average_precision=average_precision(flags))


class IDBasedContextRecall(Metric):
    name = "id_based_context_recall"
    needs = ("retrieved_context_ids", "reference_context_ids")
    uses_judge = False
    definition = "share of the reference chunk ids that were retrieved (no judge)"
    problem = "retrieval misses chunks that hold the answer"

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        retrieved, reference = _ids(sample.retrieved_context_ids), _ids(sample.reference_context_ids)
        if not reference:
            return MetricResult.unscored_because("no_reference_context_ids")
        if retrieved is None:
            return MetricResult.unscored_because("no_retrieved_context_ids")
        got = set(retrieved)
        return MetricResult.fraction([i in got for i in reference],
                                     reference=[{"id": i, "retrieved": i in got} for i in reference])


register(IDBasedContextPrecision())
register(IDBasedContextRecall())
