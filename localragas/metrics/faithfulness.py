from __future__ import annotations

from ..judge_calls.statements import STATEMENT_MODES
from ..data.metric_definition import item_summary
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .options import choice
from .registry import register_metric
from .statement_support import StatementOptions, StatementSupport


class FaithfulnessOptions(StatementOptions):
    """StatementOptions, the statements by default the answer's own sentences, not the judge's claims: better on
    BEGIN, not worse on QAGS or FaithBench, and no extraction call (docs/accuracy.md, "Decomposition");
    statements=claims is the RAGAS way."""

    statements: str = choice(STATEMENT_MODES, "sentences", "how the answer is cut into the statements judged")


@register_metric
class Faithfulness(StatementSupport):
    name = "faithfulness"
    needs = ("answer", "contexts")
    default = True
    order = 10
    item_fields = ("claims", "claim", "supported")
    summary = item_summary(*item_fields, "all {total} statement(s) supported", "unsupported {bad}/{total}")
    share = ("share of the answer's statements (its sentences by default; the judge's claims with statements=claims) "
             "that the retrieved contexts support")
    problem = "answers state things the retrieved contexts do not support (hallucination risk)"
    thresholds = {"probability": 0.50, "calibrated": 0.80, "json": 0.80}
    options = FaithfulnessOptions()

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        claims = self.statements(ctx, sample.answer, "answer") if sample.answer.strip() else []
        if not claims:
            return MetricResult.unscored_because("no_claims")
        note = {} if sample.contexts else {"note": "no contexts: no statement can be supported"}
        return self.support_result(ctx, claims, sample.contexts, **note)
