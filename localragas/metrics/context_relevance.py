"""Context relevance (ragas ContextRelevance, "nv_context_relevance"): the judge rates with two differently worded
prompts whether the retrieved contexts hold what the question needs, 0 (no), 1 (partly) or 2 (yes); the score is
the mean rating / 2."""
from __future__ import annotations

from ..judge_calls import context_ratings
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .registry import register_metric


@register_metric
class ContextRelevance(Metric):
    name = "context_relevance"
    needs = ("question", "contexts")
    order = 130
    prompts = ("rate_context_relevance",)
    definition = "judge's rating of whether the retrieved contexts hold what the question needs: 0, 1 or 2, / 2"
    problem = "retrieved contexts do not address the question"
    ragas_name = "nv_context_relevance"
    summary = {"kind": "ratings"}

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        contexts = [c for c in sample.contexts if c.strip()]
        if not contexts:
            return MetricResult.unscored_because("no_contexts")
        if " ".join("\n".join(contexts).split()) in " ".join(sample.question.split()):
            return MetricResult.of(0.0, note="the contexts only repeat the question (scored 0, as ragas does)")
        ratings = context_ratings(ctx, sample.question, contexts)
        return MetricResult.of(sum(ratings) / (2 * len(ratings)), ratings=ratings,
                                             scale="0 no relevant information, 1 partly, 2 what the question needs")
