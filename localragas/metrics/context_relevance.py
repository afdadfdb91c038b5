"""Context relevance (ragas ContextRelevance, "nv_context_relevance"): the judge rates with two differently worded
prompts whether the retrieved contexts hold what the question needs, 0 (no), 1 (partly) or 2 (yes); the score is
the mean rating / 2."""
from __future__ import annotations

from .. import budget
from ..outputs import Rating
from ..prompts import rate_context_relevance
from ..prompts.rating import VARIANTS
from ..schema import MetricResult, Sample
from .base import Metric, register, with_warnings

RATING_REPLY = 16  # {"rating": 2}


def fitted_contexts(judge, question: str, contexts: list[str], warnings: list[str]) -> list[str]:
    """The contexts, cut at the end so that the rating prompt fits the judge's context window."""
    w = budget.Window(judge)
    if all(w.fits(rate_context_relevance(question, contexts, v), RATING_REPLY) for v in range(VARIANTS)):
        return contexts
    room = min(w.room(rate_context_relevance(question, [], v)) for v in range(VARIANTS)) - RATING_REPLY
    kept: list[str] = []
    for c in contexts:
        left = room - budget.TAG_TOKENS - sum(w.tokens(k) + budget.TAG_TOKENS for k in kept)
        if left < budget.MIN_ITEM:
            break
        kept.append(c if w.tokens(c) <= left else budget.truncate(c, left, w.tokens))
    kept = kept or [budget.truncate(contexts[0], budget.MIN_ITEM, w.tokens)]
    warnings.append(f"the contexts did not fit the judge's context window (n_ctx={w.n_ctx}): the ratings saw "
                    f"{len(kept)} of {len(contexts)} context(s), the last one cut")
    return kept


class ContextRelevance(Metric):
    name = "context_relevance"
    needs = ("question", "contexts")
    prompts = ("rate_context_relevance",)
    definition = "judge's rating of whether the retrieved contexts hold what the question needs: 0, 1 or 2, / 2"
    problem = "retrieved contexts do not address the question"

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        contexts = [c for c in sample.contexts if c.strip()]
        if not contexts:
            return MetricResult.unscored_because("no_contexts")
        if " ".join("\n".join(contexts).split()) in " ".join(sample.question.split()):
            return MetricResult.of(0.0, note="the contexts only repeat the question (scored 0, as ragas does)")
        warnings: list[str] = []
        contexts = fitted_contexts(judge, sample.question, contexts, warnings)
        ratings = [judge.generate(rate_context_relevance(sample.question, contexts, v), Rating).rating
                   for v in range(VARIANTS)]
        return with_warnings(MetricResult.of(sum(ratings) / (2 * len(ratings)), ratings=ratings,
                                             scale="0 no relevant information, 1 partly, 2 what the question needs"),
                             warnings)


register(ContextRelevance())
