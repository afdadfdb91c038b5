from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import Metric, claims_of, register, supported


class Faithfulness(Metric):
    name = "faithfulness"
    needs = ("answer", "contexts")
    definition = "share of the answer's claims that the retrieved contexts support"
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        claims = claims_of(judge, sample.answer, sample.question) if sample.answer.strip() else []
        if not claims:
            return MetricResult.unscored_because("no_claims")
        flags = supported(judge, claims, sample.contexts)
        evidence = {"claims": [{"claim": c, "supported": f} for c, f in zip(claims, flags)]}
        if not sample.contexts:
            evidence["note"] = "no contexts: no claim can be supported"
        return MetricResult.fraction(flags, **evidence)


register(Faithfulness())
