from __future__ import annotations

from ..schema import MetricResult, Sample
from ..asking import claims_of
from .base import WithVerdicts, register, support_result, with_warnings


class Faithfulness(WithVerdicts):
    name = "faithfulness"
    needs = ("answer", "contexts")
    definition = ("share of the answer's claims that the retrieved contexts support (by default graded: the mean of "
                  "the judge's P(yes) per claim)")
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"
    other_prompts = ("extract_claims",)
    verdict_prompts = ("verify_statement", "verify_statements")

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        warnings: list[str] = []
        claims = claims_of(judge, sample.answer, sample.question, warnings) if sample.answer.strip() else []
        if not claims:
            return with_warnings(MetricResult.unscored_because("no_claims"), warnings)
        note = {} if sample.contexts else {"note": "no contexts: no claim can be supported"}
        return support_result(judge, claims, sample.contexts, self.options["verdicts"], warnings,
                              ("claims", "claim", "supported"), **note)


register(Faithfulness())
