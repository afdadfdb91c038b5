from __future__ import annotations

from ..metric_definition import item_summary, verdict_renderer
from ..schema import MetricResult
from ..scoring import Scoring
from .base import support_result
from .statement_support import StatementSupport


class Faithfulness(StatementSupport):
    name = "faithfulness"
    needs = ("answer", "contexts")
    definition = ("share of the answer's claims that the retrieved contexts support (by default graded: the mean of "
                  "the judge's P(yes) per claim)")
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"
    item_fields = ("claims", "claim", "supported")
    summary = item_summary(*item_fields, "all {total} claim(s) supported", "unsupported {bad}/{total}")
    renderer = verdict_renderer(*item_fields, "supported", "not supported")
    thresholds = {"probability": 0.50, "calibrated": 0.80, "json": 0.80}

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        claims = self.statements(ctx, sample.answer, "answer") if sample.answer.strip() else []
        if not claims:
            return MetricResult.unscored_because("no_claims")
        note = {} if sample.contexts else {"note": "no contexts: no claim can be supported"}
        return support_result(ctx, self, claims, sample.contexts, **note)
