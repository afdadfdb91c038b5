from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import Metric, claims_of, register, supported, with_warnings


class ContextRecall(Metric):
    name = "context_recall"
    needs = ("reference", "contexts")
    definition = "share of the reference answer's statements that can be attributed to the retrieved contexts"
    problem = "retrieval misses information the answer needs"
    prompts = ("extract_claims", "verify_statements")

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        warnings: list[str] = []
        statements = claims_of(judge, sample.reference, sample.question, warnings, what="reference")
        if not statements:
            return with_warnings(
                MetricResult.unscored_because("no_claims", note="the reference holds no factual statement"), warnings)
        flags = supported(judge, statements, sample.contexts, warnings)
        evidence = {"statements": [{"statement": s, "attributed": f} for s, f in zip(statements, flags)]}
        if not sample.contexts:
            evidence["note"] = "no contexts: no statement can be attributed"
        return with_warnings(MetricResult.fraction(flags, **evidence), warnings)


register(ContextRecall())
