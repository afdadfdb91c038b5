"""A LangChain chain evaluated: ask it each question and keep its answer and the documents its retrievers returned.

    from localragas.integrations.langchain import collect
    samples = collect(chain, ["How long is the warranty?", ...])   # a list of Samples
    report = localragas.evaluate(samples, judge=judge)

The chain is any Runnable (an LCEL chain, create_retrieval_chain's); see localragas.testset.frameworks for how it is
asked and read. `localragas run-rag --target module:chain` asks one the same way. Needs langchain-core
(`pip install 'localragas[langchain]'`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import ConfigError
from ..data.schema import Sample
from ..testset.frameworks import framework_pipeline, is_langchain
from .collect import collect_with, require


def collect(chain: Any, questions: Iterable[str | Mapping[str, Any]], *, input_key: str | None = None) -> list[Sample]:
    """One sample per question: the question (a string, or a record whose `reference`, `id`, ... are kept), the
    chain's answer, the retrieved documents' texts as contexts (their ids as retrieved_context_ids when each has
    one). input_key: the key of the object the chain takes (default: read from its input schema: `input`,
    `question`, `query`, or its one field; the question itself when it takes a string)."""
    require("langchain_core", "langchain", "localragas.integrations.langchain")
    ask = framework_pipeline(chain, input_key)
    if ask is None or not is_langchain(chain):
        raise ConfigError(f"chain: expected a LangChain Runnable, got {type(chain).__name__}")
    return collect_with(ask, questions)
