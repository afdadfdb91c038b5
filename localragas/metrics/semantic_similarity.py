"""Semantic similarity: the cosine of the answer's and the reference's embeddings (ragas SemanticSimilarity)."""
from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ..core.errors import ConfigError
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .options import Options
from .registry import register_metric


def similarity(embedder, answer: str, reference: str) -> float:
    """Cosine similarity of two texts' unit embeddings, clamped to [0, 1]; 0 for a blank answer."""
    if not answer.strip():
        return 0.0
    return min(1.0, max(0.0, embedder.similarities(answer, [reference])[0]))


class SemanticSimilarityOptions(Options):
    threshold: float | None = Field(default=None, description="scores 1 at or above it, else 0 (None: the cosine "
                                                              "itself)")

    @field_validator("threshold", mode="before")
    @classmethod
    def _threshold(cls, t: Any) -> float | None:
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1):
            raise ValueError(f"threshold must be a number in [0, 1], got {t!r}")
        return None if t is None else float(t)


@register_metric
class SemanticSimilarity(Metric):
    name = "semantic_similarity"
    needs = ("answer", "reference")
    order = 120
    uses_embedder = True
    uses_judge = False
    options: SemanticSimilarityOptions = SemanticSimilarityOptions()
    definition = "cosine similarity of the answer's and the reference's embeddings (no judge)"
    problem = "answers say something different from the reference answers"

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        embedder = ctx.embedder
        if embedder is None:
            raise ConfigError("semantic_similarity needs an embedder")
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        sim = similarity(embedder, sample.answer, sample.reference)
        ev: dict[str, Any] = {"similarity": sim, "embedder": getattr(embedder, "name", "")}
        if not sample.answer.strip():
            ev["note"] = "empty answer"
        t = self.options.threshold
        if t is not None:
            ev["threshold"] = t
            return MetricResult.of(1.0 if sim >= t else 0.0, **ev)
        return MetricResult.of(sim, **ev)
