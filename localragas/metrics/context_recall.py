from __future__ import annotations

from ..schema import MetricResult, Sample
from .base import WithVerdicts, claims_of, register, support_result, with_warnings


class ContextRecall(WithVerdicts):
    name = "context_recall"
    needs = ("reference", "contexts")
    definition = ("share of the reference answer's statements that can be attributed to the retrieved contexts (by "
                  "default graded: the mean of the judge's P(yes) per statement)")
    problem = "retrieval misses information the answer needs"
    other_prompts = ("extract_claims",)
    verdict_prompts = ("verify_statement", "verify_statements")

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        warnings: list[str] = []
        statements = claims_of(judge, sample.reference, sample.question, warnings, what="reference")
        if not statements:
            return with_warnings(
                MetricResult.unscored_because("no_claims", note="the reference holds no factual statement"), warnings)
        note = {} if sample.contexts else {"note": "no contexts: no statement can be attributed"}
        return support_result(judge, statements, sample.contexts, self.options["verdicts"], warnings,
                              ("statements", "statement", "attributed"), **note)


register(ContextRecall())
