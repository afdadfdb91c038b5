"""Helpers of the metric tests: samples, scripted verdicts of both modes (json: one verdicts array; probability: one
P(yes) reply an item), a stub embedder."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from localragas.judge_calls.verdicts import VERDICTS
from localragas.judges.embeddings import Embedder
from localragas.data.schema import Sample


@dataclass(frozen=True)
class Texts:
    """A sample's texts; calling it gives a Sample of them (id s1) with the given fields changed or added."""

    question: str
    contexts: list[str]
    answer: str
    reference: str

    def __call__(self, **kw) -> Sample:
        base = dict(id="s1", question=self.question, contexts=list(self.contexts), answer=self.answer,
                    reference=self.reference)
        base.update(kw)
        return Sample(**base)


# The storage tiers of test_metrics.py and test_graded_verdicts.py: three claims in the answer, two of them supported.
ACME = Texts("Which storage tiers does Acme offer?",
             ["Acme offers three storage tiers: Standard, Infrequent Access and Archive.",
              "The Archive tier restores data within 12 hours."],
             "Acme offers Standard, Infrequent Access and Archive. Archive restores in 12 hours. It is free.",
             "Three tiers: Standard, Infrequent Access and Archive.")


def verdicts(*flags: str) -> dict:
    """The reply of a JSON verdict call (verify_statements, judge_chunks): "yes"/"no" per item, in order."""
    return {"verdicts": [{"id": i, "verdict": v} for i, v in enumerate(flags, 1)]}


def graded(*ps: float, mass: float = 1.0) -> list[dict]:
    """The replies of graded verdict calls (verify_statement, judge_chunk, ...): one P(yes) reply a value."""
    return [{"p_yes": p, "mass": mass} for p in ps]


# The two verdict modes (metric option verdicts=): json, one constrained-JSON call with a yes/no per item;
# probability, one call an item, read as the judge's P(yes). The prompt each asks, for claims and for chunks:
MODES = tuple(VERDICTS)
SUPPORT_CALL = {"json": "verify_statements", "probability": "verify_statement"}
CHUNK_CALL = {"json": "judge_chunks", "probability": "judge_chunk"}


def replies(mode: str, values: list[float]) -> list[dict]:
    """The verdict replies that give the items these values: json, one array of yes (1) / no (0); probability, one
    P(yes) reply a value."""
    if mode == "json":
        assert set(values) <= {0, 1}, values
        return [verdicts(*("yes" if v else "no" for v in values))]
    return graded(*values, mass=0.9)


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


def dies_after(n: int):
    """A FakeJudge responder that answers as the heuristic judge for n calls, then raises JudgeError (a server that
    went away mid-run: what a checkpoint must survive)."""
    from localragas.core.errors import JudgeError
    from localragas.judges.fake import heuristic_reply
    calls = {"n": 0}

    def respond(prompt, output):
        calls["n"] += 1
        if calls["n"] > n:
            raise JudgeError("server went away")
        return heuristic_reply(prompt, output)
    return respond
