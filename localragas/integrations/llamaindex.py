"""A LlamaIndex query engine evaluated: ask it each question and keep its answer and source nodes.

    from localragas.integrations.llamaindex import collect
    samples = collect(index.as_query_engine(), ["How long is the warranty?", ...])   # a list of Samples
    report = localragas.evaluate(samples, judge=judge)

`localragas run-rag --target module:engine` asks one the same way; `evaluate([{"question": q, "answer": response}])`
reads a Response already in hand. Needs llama-index-core (`pip install 'localragas[llamaindex]'`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import ConfigError
from ..data.schema import Sample
from ..testset.frameworks import framework_pipeline, is_llamaindex
from .collect import collect_with, require


def collect(engine: Any, questions: Iterable[str | Mapping[str, Any]]) -> list[Sample]:
    """One sample per question: the question (a string, or a record whose `reference`, `id`, ... are kept), the
    engine's answer (`Response.response`), the source nodes' texts as contexts and their node ids as
    retrieved_context_ids."""
    require("llama_index.core", "llamaindex", "localragas.integrations.llamaindex")
    ask = framework_pipeline(engine)
    if ask is None or not is_llamaindex(engine):
        raise ConfigError(f"engine: expected a LlamaIndex query engine (index.as_query_engine()), got "
                          f"{type(engine).__name__}")
    return collect_with(ask, questions)
