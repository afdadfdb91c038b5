from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import Metric, claims_of, register, supported


class ContextRecall(Metric):
    name = "context_recall"
    needs = ("reference", "contexts")
    definition = "share of the reference answer's statements that can be attributed to the retrieved contexts"
    problem = "retrieval misses information the answer needs"

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        statements = claims_of(judge, sample.reference, sample.question)
        if not statements:
            return MetricResult.unscored_because("no_claims", note="the reference holds no factual statement")
        flags = supported(judge, statements, sample.contexts)
        evidence = {"statements": [{"statement": s, "attributed": f} for s, f in zip(statements, flags)]}
        if not sample.contexts:
            evidence["note"] = "no contexts: no statement can be attributed"
        return MetricResult.fraction(flags, **evidence)


register(ContextRecall())
