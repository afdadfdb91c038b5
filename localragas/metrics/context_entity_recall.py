"""Context entity recall (ragas ContextEntityRecall): the share of the reference's named entities that the retrieved
contexts mention, |entities(reference) ∩ entities(contexts)| / |entities(reference)|.

The judge lists the reference's entities; an entity written verbatim in the contexts (ignoring case and spacing)
counts as mentioned without asking; the others are asked in one call, "do the contexts mention this entity, in any
form?" (ragas instead intersects two separately extracted lists as exact strings, which misses "Sun" vs "Sun
Microsystems" and entities past the list's length on long contexts).
"""
from __future__ import annotations

import re

from ..judge_calls import check_items, entities_of
from ..data.metric_definition import item_summary
from ..prompts import entities_in_contexts
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .registry import register_metric


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def written_in(entity: str, text: str) -> bool:
    """Is the entity written in the text (both normalised)? At an ASCII letter or digit edge it must be a whole
    word ("Java" is not in "JavaScript"); Chinese has no word edges."""
    e = _norm(entity)
    left = r"(?<![a-z0-9])" if e[:1].isascii() and e[:1].isalnum() else ""
    right = r"(?![a-z0-9])" if e[-1:].isascii() and e[-1:].isalnum() else ""
    return re.search(left + re.escape(e) + right, text) is not None


@register_metric
class ContextEntityRecall(Metric):
    name = "context_entity_recall"
    needs = ("reference", "contexts")
    order = 50
    prompts = ("extract_entities", "entities_in_contexts")
    definition = "share of the reference answer's named entities that the retrieved contexts mention"
    problem = "retrieval misses entities (names, dates, numbers) the reference answer needs"
    summary = item_summary("entities", "entity", "in_contexts", "all {total} entities in the contexts",
                           "entities not in the contexts {bad}/{total}")

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        entities = entities_of(ctx, sample.reference)
        if not entities:
            return MetricResult.unscored_because(
                "no_entities", note="the reference names no entity")
        if not sample.contexts:
            rows = [{"entity": e, "in_contexts": False, "how": "no contexts"} for e in entities]
            return MetricResult.of(0.0, entities=rows, note="no contexts: no entity can be found")
        joined = _norm("\n".join(sample.contexts))
        verbatim = [written_in(e, joined) for e in entities]
        ask = [e for e, v in zip(entities, verbatim) if not v]
        answers = iter(check_items(ctx, ask, sample.contexts, prompt=entities_in_contexts)
                       if ask else [])
        rows = [{"entity": e, "in_contexts": True, "how": "verbatim"} if v else
                {"entity": e, "in_contexts": next(answers), "how": "judge"} for e, v in zip(entities, verbatim)]
        return MetricResult.fraction([r["in_contexts"] for r in rows], entities=rows)
