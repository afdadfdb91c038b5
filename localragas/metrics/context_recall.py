from __future__ import annotations

from ..data.metric_definition import item_summary
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .registry import register_metric
from .statement_support import StatementSupport


@register_metric
class ContextRecall(StatementSupport):
    name = "context_recall"
    needs = ("reference", "contexts")
    default = True
    order = 40
    item_fields = ("statements", "statement", "attributed")
    summary = item_summary(*item_fields, "all {total} reference statement(s) attributed",
                           "not in the contexts {bad}/{total}")
    share = "share of the reference answer's statements that can be attributed to the retrieved contexts"
    problem = "retrieval misses information the answer needs"
    thresholds = {"probability": 0.50, "calibrated": 0.70, "json": 0.70}

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        statements = self.statements(ctx, sample.reference, "reference")
        if not statements:
            return MetricResult.unscored_because("no_claims", note="the reference holds no factual statement")
        note = {} if sample.contexts else {"note": "no contexts: no statement can be attributed"}
        return self.support_result(ctx, statements, sample.contexts, **note)
