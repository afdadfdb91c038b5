from __future__ import annotations

from typing import Any

from ..schema import MetricResult, Sample
from .base import DEFAULT_VERDICTS, Metric, check_verdicts, claims_of, register, support_result, with_warnings


class Faithfulness(Metric):
    name = "faithfulness"
    needs = ("answer", "contexts")
    options = {"verdicts": DEFAULT_VERDICTS}
    definition = ("share of the answer's claims that the retrieved contexts support (by default graded: the mean of "
                  "the judge's P(yes) per claim)")
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"

    @property
    def prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        verdicts = "verify_statement" if self.options["verdicts"] == "probability" else "verify_statements"
        return ("extract_claims", verdicts)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return check_verdicts(self.name, options)

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        warnings: list[str] = []
        claims = claims_of(judge, sample.answer, sample.question, warnings) if sample.answer.strip() else []
        if not claims:
            return with_warnings(MetricResult.unscored_because("no_claims"), warnings)
        note = {} if sample.contexts else {"note": "no contexts: no claim can be supported"}
        return support_result(judge, claims, sample.contexts, self.options["verdicts"], warnings,
                              ("claims", "claim", "supported"), **note)


register(Faithfulness())
