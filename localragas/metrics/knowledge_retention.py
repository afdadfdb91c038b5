"""Knowledge retention (deepeval's KnowledgeRetentionMetric, asked as one graded verdict): does a conversation turn's
reply stay consistent with what the user said earlier in the conversation, neither contradicting it nor forgetting it
(asking again for what the user gave, answering as if a stated constraint had not been said)? Scored per turn, the
judge's P(yes) to that question about the conversation so far and the reply (docs/conversations.md).

deepeval extracts the user's facts from each user message (a generation per message) and asks, per assistant
message, whether it contradicts or forgets them. A 1.5B judge writes such extractions poorly and slowly, so here the
user's messages are shown as they are, and one graded call per turn asks the question about all of them at once: a
call per earlier message would give each turn as many P(yes) as it has earlier messages, most about a message the
reply has nothing to do with, and their lowest (any one forgotten fact is a lapse) would sink with the conversation's
length rather than with the reply's memory."""
from __future__ import annotations

from ..data.metric_definition import item_summary, verdict_renderer
from ..data.schema import MetricResult
from ..judge_calls.conversation import RETAINED_FAMILY, conversation_of, retention
from ..judge_calls.sample_context import Scoring
from .base import GradedOnly
from .registry import register_metric


@register_metric
class KnowledgeRetention(GradedOnly):
    name = "knowledge_retention"
    needs = ("turn", "answer")
    order = 160
    family = RETAINED_FAMILY
    item_fields = ("replies", "reply", "consistent")
    definition = ("per turn of a conversation: the judge's P(yes) that the reply stays consistent with what the user "
                  "said earlier in the conversation (neither contradicts it nor forgets it)")
    problem = "replies contradict or forget what the user said earlier in the conversation"
    summary = item_summary(*item_fields, "consistent with what the user said earlier",
                           "not consistent with what the user said earlier")
    renderer = verdict_renderer(*item_fields, "consistent", "not consistent")

    def measure(self, ctx: Scoring) -> MetricResult:
        turn = ctx.sample.turn
        if turn is None:
            return MetricResult.unscored_because("no_conversation")
        if not turn.said_by("user"):
            return MetricResult.unscored_because("no_earlier_turn")
        got, earlier, first = retention(ctx, conversation_of(turn, ctx.sample.answer))
        said = [{"message": first + i, "text": m.content} for i, m in enumerate(earlier) if m.role == "user"]
        return MetricResult.of(got.values[0], verdicts="probability", calibrated=got.calibrated,
                               replies=[{"reply": ctx.sample.answer, **got.item(0, "consistent")}], user_said=said)
