"""Helpers of the metric tests: samples, scripted verdicts of both modes (json: one verdicts array; probability: one
P(yes) reply an item), a stub embedder."""
from __future__ import annotations

from typing import Callable

import numpy as np

from localragas.embeddings import Embedder
from localragas.schema import Sample


def sampler(question: str, contexts: list[str], answer: str, reference: str) -> Callable[..., Sample]:
    """sample(**fields): a Sample of these texts (id s1), with the given fields changed or added."""

    def sample(**kw) -> Sample:
        base = dict(id="s1", question=question, contexts=list(contexts), answer=answer, reference=reference)
        base.update(kw)
        return Sample(**base)

    return sample


def verdicts(*flags: str) -> dict:
    """The reply of a JSON verdict call (verify_statements, judge_chunks): "yes"/"no" per item, in order."""
    return {"verdicts": [{"id": i, "verdict": v} for i, v in enumerate(flags, 1)]}


def graded(*ps: float, mass: float = 1.0) -> list[dict]:
    """The replies of graded verdict calls (verify_statement, judge_chunk, ...): one P(yes) reply a value."""
    return [{"p_yes": p, "mass": mass} for p in ps]


def verdict_count(output: type) -> int:
    """The exact array length a verdicts_for(n) output demands (min == max == n)."""
    schema = output.model_json_schema()["properties"]["verdicts"]
    assert schema["minItems"] == schema["maxItems"]
    return schema["maxItems"]


class StubEmbedder(Embedder):
    """Fixed vectors per text (normalised), so cosine similarities are known exactly."""

    name = "stub"

    def __init__(self, vectors: dict[str, list[float]]):
        self.vectors = vectors
        self.seen: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen.append(list(texts))
        rows = np.array([self.vectors[t] for t in texts], dtype=np.float64)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)
