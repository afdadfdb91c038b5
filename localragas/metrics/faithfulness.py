from __future__ import annotations

from typing import Any

from ..judge_calls.statements import STATEMENT_MODES
from ..data.metric_definition import item_summary
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from ..judge_calls.verdicts import YES
from ..prompts.verdicts import user_passage
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
        # A conversation's turn: a statement the contexts do not support is asked again against the user's own words
        # up to this turn (never the assistant's earlier replies: a hallucination repeated would launder itself), and
        # keeps the higher verdict. Asked apart, not as one more passage beside the contexts: that way the contexts'
        # verdicts are a single sample's, and on MTRAG's rated turns the extra passage cost 0.056 ROC AUC
        # (docs/conversations.md, "Turn faithfulness: the rule").
        notes: list[dict] = [{} for _ in claims]
        got = self.verdicts.support(ctx, claims, sample.contexts, self.options.question, notes)
        turn = sample.turn
        said = [s for s in (*turn.said_by("user"), turn.user_message) if s.strip()] if turn is not None else []
        weak = [i for i, v in enumerate(got.values) if v < YES]
        if said and weak:
            theirs = self.verdicts.support(ctx, [claims[i] for i in weak], [user_passage(said, ctx.language.lang)],
                                           self.options.question, [{} for _ in weak])
            for k, i in enumerate(weak):
                if theirs.values[k] > got.values[i]:
                    got.values[i] = theirs.values[k]
                    if got.raw is not None and theirs.raw is not None:
                        got.raw[i] = theirs.raw[k]
                    notes[i]["by_user_words"] = True
        evidence: dict[str, Any] = {}
        if not sample.contexts:
            evidence["note"] = ("no retrieved contexts: only the user's own words can support a statement" if said
                                else "no contexts: no statement can be supported")
        return self.result_of(claims, got, notes, **evidence)
