"""A LangChain runnable or a LlamaIndex query engine asked a question as `run-rag --target module:name` and
`localragas.integrations.langchain` / `.llamaindex` ask it: each becomes a function question -> {"answer",
"contexts", ("retrieved_context_ids")}, the reply rag_targets.parse_reply checks.

Recognised by class (a class in the object's MRO from `langchain_core` named Runnable, from `llama_index` named
BaseQueryEngine), so neither library is imported until such an object is given, when it is installed.

LangChain: the chain is invoked with the question (or {key: question} when its input is an object: `input`,
`question`, `query`, or its one field), with a callback that records the documents every retriever inside it
returned; the answer is the output (a string, a message, or a dict's `answer` / `result` / ...), the contexts the
documents the output holds (`context`, `source_documents`), else those the callback saw. LlamaIndex:
`engine.query(question)`; the answer is the Response's text, the contexts its source nodes.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import ConfigError
from ..data.framework_outputs import answer_text, documents_fields, framework_record, response_fields

INPUT_KEYS = ("input", "question", "query")


def _has_class(obj: Any, module: str, names: tuple[str, ...]) -> bool:
    return any(c.__module__.split(".")[0] == module and c.__name__ in names for c in type(obj).__mro__)


def is_langchain(obj: Any) -> bool:
    return _has_class(obj, "langchain_core", ("Runnable",))


def is_llamaindex(obj: Any) -> bool:
    return _has_class(obj, "llama_index", ("BaseQueryEngine",))


def framework_pipeline(obj: Any, input_key: str | None = None) -> Callable[[str], dict[str, Any]] | None:
    """The function that asks `obj` a question, if it is a LangChain runnable or a LlamaIndex query engine; None
    otherwise. A retriever alone (it gives documents, no answer) is refused."""
    if _has_class(obj, "langchain_core", ("BaseRetriever",)) or _has_class(obj, "llama_index", ("BaseRetriever",)):
        raise ConfigError(f"{type(obj).__name__} is a retriever: it gives documents but no answer; give the chain or "
                          "query engine that answers (its retriever's documents are collected as the contexts)")
    if is_langchain(obj):
        return LangChainPipeline(obj, input_key)
    if is_llamaindex(obj):
        return lambda question: response_fields(obj.query(question))
    return None


class LangChainPipeline:
    def __init__(self, chain: Any, input_key: str | None = None):
        self.chain = chain
        self.input_key = input_key if input_key is not None else _input_key(chain)

    def __call__(self, question: str) -> dict[str, Any]:
        from langchain_core.callbacks import BaseCallbackHandler  # noqa: PLC0415 - the chain's own library

        retrieved: list[Any] = []

        class Documents(BaseCallbackHandler):
            def on_retriever_end(self, documents, **kwargs) -> None:  # noqa: ANN001 - LangChain's signature
                retrieved.extend(documents)

        given = question if self.input_key is None else {self.input_key: question}
        output = self.chain.invoke(given, config={"callbacks": [Documents()]})
        fields = framework_record(output) if isinstance(output, Mapping) else {"answer": answer_text(output)}
        if isinstance(output, Mapping) and "contexts" not in fields:
            fields.pop("context", None)  # text the chain formatted from its documents: the documents are read
        if "contexts" not in fields:
            fields.update(documents_fields(retrieved))
        return {k: fields[k] for k in ("answer", "contexts", "retrieved_context_ids") if k in fields}


def _input_key(chain: Any) -> str | None:
    """None (the chain takes the question itself) or the key of the object it takes."""
    try:
        schema = chain.get_input_jsonschema() if hasattr(chain, "get_input_jsonschema") else \
            chain.input_schema.model_json_schema()
    except Exception:  # noqa: BLE001 - a chain whose schema cannot be drawn: ask it with the question itself
        return None
    fields = schema.get("properties") if schema.get("type") == "object" else None
    if not fields:
        return None
    for key in INPUT_KEYS:
        if key in fields:
            return key
    if len(fields) == 1:
        return next(iter(fields))
    raise ConfigError(f"the chain takes an object with {', '.join(sorted(fields))}: none is the question ("
                      f"{', '.join(INPUT_KEYS)}); name it with input_key=, or wrap the chain in a function of the "
                      "question")
