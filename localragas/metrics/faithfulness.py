from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import Metric, claims_of, register, supported, with_warnings


class Faithfulness(Metric):
    name = "faithfulness"
    needs = ("answer", "contexts")
    definition = "share of the answer's claims that the retrieved contexts support"
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"
    prompts = ("extract_claims", "verify_statements")

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        warnings: list[str] = []
        claims = claims_of(judge, sample.answer, sample.question, warnings) if sample.answer.strip() else []
        if not claims:
            return with_warnings(MetricResult.unscored_because("no_claims"), warnings)
        flags = supported(judge, claims, sample.contexts, warnings)
        evidence = {"claims": [{"claim": c, "supported": f} for c, f in zip(claims, flags)]}
        if not sample.contexts:
            evidence["note"] = "no contexts: no claim can be supported"
        return with_warnings(MetricResult.fraction(flags, **evidence), warnings)


register(Faithfulness())
