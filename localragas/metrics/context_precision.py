from __future__ import annotations

from ..budget import judge_chunk_relevance
from ..schema import MetricResult, Sample
from .base import Metric, register, with_warnings


def average_precision(relevant: list[bool]) -> float:
    """Mean of precision@k over the ranks k that hold a relevant chunk; 0 when none is relevant."""
    hits, total = 0, 0.0
    for k, rel in enumerate(relevant, 1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


class ContextPrecision(Metric):
    name = "context_precision"
    needs = ("question", "contexts")
    definition = ("average precision of the ranked contexts: are the useful chunks ranked first? (chunks judged "
                  "against the reference, else the answer, else the question alone)")
    problem = "retrieval returns noise: irrelevant chunks, or relevant ones ranked low"
    prompts = ("judge_chunks",)

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        if not sample.contexts:
            return MetricResult.unscored_because("no_contexts")
        if sample.reference:
            target, kind = sample.reference, "reference answer"
        elif sample.answer.strip():
            target, kind = sample.answer, "answer"
        else:  # a retrieval-only sample: does each chunk answer the question?
            target, kind = "", "question"
        warnings: list[str] = []
        flags = judge_chunk_relevance(judge, sample.question, target, kind, sample.contexts, warnings)
        return with_warnings(MetricResult.of(
            average_precision(flags),
            judged_against=kind.split()[0],
            chunks=[{"rank": k, "relevant": f} for k, f in enumerate(flags, 1)],
            fraction_relevant=sum(flags) / len(flags),
        ), warnings)


register(ContextPrecision())
