"""Conversation completeness (deepeval's ConversationCompletenessMetric, asked as graded verdicts): were the user's
requests in a conversation addressed by the assistant's replies? Scored once per conversation, on its last turn: for
each user message, the judge's P(yes) that the replies addressed it, over the whole conversation; the score is their
mean (docs/conversations.md).

deepeval first has the judge extract the user's intentions from the conversation (a generation), then asks about
each. Here each user message is an item as written: a 1.5B judge's extraction would be slow and would merge, drop or
invent intentions, while a user message is what the user asked for, in their words, and the evidence can quote it; a
message that asks for nothing (a greeting, thanks) is addressed when a reply acknowledges it."""
from __future__ import annotations

from ..data.metric_definition import item_summary, verdict_renderer
from ..data.schema import MetricResult
from ..judge_calls.conversation import ADDRESSED_FAMILY, conversation_of, requests_addressed
from ..judge_calls.sample_context import Scoring
from .base import GradedOnly
from .registry import register_metric


@register_metric
class ConversationCompleteness(GradedOnly):
    name = "conversation_completeness"
    needs = ("turn", "answer")
    order = 170
    family = ADDRESSED_FAMILY
    item_fields = ("requests", "request", "addressed")
    definition = ("per conversation (scored on its last turn): the mean of the judge's P(yes), for each user "
                  "message, that the assistant's replies addressed it")
    problem = "the assistant leaves users' requests in a conversation unaddressed"
    summary = item_summary(*item_fields, "all {total} request(s) addressed", "not addressed {bad}/{total}")
    renderer = verdict_renderer(*item_fields, "addressed", "not addressed")

    def measure(self, ctx: Scoring) -> MetricResult:
        turn = ctx.sample.turn
        if turn is None:
            return MetricResult.unscored_because("no_conversation")
        if not turn.last:
            return MetricResult.unscored_because("no_conversation_end")
        conversation = conversation_of(turn, ctx.sample.answer)
        got, requests = requests_addressed(ctx, conversation)
        if not requests:
            return MetricResult.unscored_because("no_requests")
        rows = [{"request": text, "message": n, **got.item(i, "addressed")} for i, (n, text) in enumerate(requests)]
        left_out = sum(m.role == "user" and bool(m.content.strip()) for m in conversation) - len(requests)
        return MetricResult.of(sum(got.values) / len(got.values), verdicts="probability", calibrated=got.calibrated,
                               requests=rows, turns=turn.turns,
                               **({"requests_left_out": left_out} if left_out else {}))
