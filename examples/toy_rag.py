"""A toy RAG pipeline over examples/docs, for trying `localragas run-rag` without a model.

Retrieval: the chunks localragas generate makes of examples/docs (localragas.testset.documents.load_chunks, so the
ids match a generated test set's reference_context_ids), ranked by BM25 over lower-cased words. The "answer": the two
sentences of the retrieved chunks that share the most words with the question, in their order. A pipeline of yours
returns the same shape:

    localragas run-rag testset.jsonl --target examples/toy_rag.py:answer --out filled.jsonl
    localragas run-rag testset.jsonl --target examples.toy_rag:answer --out filled.jsonl   # from the checkout's root
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from localragas.testset.documents import load_chunks
from localragas.core.sentences import sentences

DOCS = Path(__file__).resolve().parent / "docs"
TOP_K = 2
K1, B = 1.5, 0.75
_WORD = re.compile(r"\w+")
_STOP = frozenset("a an the of to in on for and or is are was were be by with as at it its this that from what which "
                  "who how when where why does do did".split())


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@lru_cache(maxsize=1)
def _index():
    chunks = load_chunks([DOCS])
    docs = [Counter(_words(c.text)) for c in chunks]
    df = Counter(w for d in docs for w in d)
    avg = sum(sum(d.values()) for d in docs) / len(docs)
    return chunks, docs, df, avg


def retrieve(question: str, k: int = TOP_K):
    chunks, docs, df, avg = _index()
    n = len(docs)
    terms = set(_words(question))

    def bm25(d: Counter) -> float:
        length = sum(d.values())
        return sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * d[t] * (K1 + 1)
                   / (d[t] + K1 * (1 - B + B * length / avg)) for t in terms if t in d)

    ranked = sorted(range(n), key=lambda i: (-bm25(docs[i]), i))
    return [chunks[i] for i in ranked[:k]]


def answer(question: str) -> dict:
    """The run-rag contract: {"answer": str, "contexts": [str], "retrieved_context_ids": [str]}."""
    found = retrieve(question)
    terms = set(_words(question))
    candidates = [s for c in found for s in sentences(c.text) if not s.startswith("#")]
    best = sorted(range(len(candidates)), key=lambda i: (-len(terms & set(_words(candidates[i]))), i))[:2]
    return {"answer": " ".join(candidates[i] for i in sorted(best)),
            "contexts": [c.text for c in found],
            "retrieved_context_ids": [c.id for c in found]}
