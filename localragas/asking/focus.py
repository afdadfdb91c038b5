"""Evidence focus (the `evidence=focused` option of faithfulness and context recall): each statement judged against
only the context sentences most similar to it, by the sample's embedder, instead of against all the contexts."""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import ConfigError
from ..core.sentences import sentences

if TYPE_CHECKING:
    from ..scoring import Scoring

TOP_K = 3  # the context sentences most similar to a statement (cosine of the embedder's vectors)
NEIGHBOURS = 1  # and this many sentences each side of each, in the same context (a pronoun's antecedent, a list's head)


def focused_contexts(ctx: "Scoring", statements: list[str],
                     contexts: list[str]) -> list[tuple[list[str], list[list[int]]]]:
    """Per statement: its focused contexts (the chosen sentences of each context that has any, in their original
    order, joined) and the chosen sentences as [context, sentence] numbers (from 1). The context sentences are split
    and embedded once per sample. No embedder: a ConfigError naming the option."""
    if ctx.embedder is None:
        raise ConfigError("evidence=focused (faithfulness / context_recall) needs an embedder to find the context "
                          "sentences most similar to each statement; give one (--embedder), or use evidence=all")
    digest = hashlib.sha256("\x00".join(contexts).encode("utf-8")).hexdigest()[:16]
    units, vectors = ctx.once(f"focus:context_sentences:{digest}", lambda: _embedded(ctx, contexts))
    if not units:
        return [([], []) for _ in statements]
    similarity = ctx.embedder.embed(statements) @ vectors.T
    return [_chosen(units, row) for row in similarity]


def _embedded(ctx: "Scoring", contexts: list[str]) -> tuple[list[tuple[int, int, str]], np.ndarray]:
    units = [(c, k, s) for c, text in enumerate(contexts) for k, s in enumerate(sentences(text))]
    assert ctx.embedder is not None
    vectors = ctx.embedder.embed([s for _, _, s in units]) if units else np.zeros((0, 0))
    return units, vectors


def _chosen(units: list[tuple[int, int, str]], similarity: np.ndarray) -> tuple[list[str], list[list[int]]]:
    top = [units[i][:2] for i in np.argsort(-similarity, kind="stable")[:TOP_K]]
    wanted = {(c, k + d) for c, k in top for d in range(-NEIGHBOURS, NEIGHBOURS + 1)}
    kept = [u for u in units if u[:2] in wanted]  # units are in the contexts' order
    texts: dict[int, list[str]] = {}
    for c, _, s in kept:
        texts.setdefault(c, []).append(s)
    return [" ".join(parts) for parts in texts.values()], [[c + 1, k + 1] for c, k, _ in kept]
