"""A LangChain runnable or a LlamaIndex query or chat engine asked a question as `run-rag --target module:name` and
`localragas.integrations.langchain` / `.llamaindex` ask it: each becomes a function question -> {"answer",
"contexts", ("retrieved_context_ids")}, the reply rag_targets.parse_reply checks; one that can be given a
conversation's history takes it as `history` (its `history_parameter`, which rag_targets.history_parameter reads).

Recognised by class (a class in the object's MRO from `langchain_core` named Runnable, from `llama_index` named
BaseQueryEngine or BaseChatEngine), so neither library is imported until such an object is given, when it is
installed.

LangChain: the chain is invoked with the question (or {key: question} when its input is an object: `input`,
`question`, `query`, or its one field), with a callback that records the documents every retriever inside it
returned; the answer is the output (a string, a message, or a dict's `answer` / `result` / ...), the contexts the
documents the output holds (`context`, `source_documents`), else those the callback saw. A chain whose input object
has a `chat_history` (or `history`) key is given the conversation so far there, as LangChain messages. LlamaIndex:
`engine.query(question)`, or a chat engine's `engine.chat(question, chat_history=[ChatMessage, ...])` (one call at a
time: the history given replaces the engine's memory); the answer is the Response's text, the contexts its source
nodes.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import ConfigError
from ..data.framework_outputs import answer_text, documents_fields, framework_record, response_fields

INPUT_KEYS = ("input", "question", "query")
HISTORY_KEYS = ("chat_history", "history")  # a chain's input key for the conversation so far (LangChain's names)


def _has_class(obj: Any, module: str, names: tuple[str, ...]) -> bool:
    return any(c.__module__.split(".")[0] == module and c.__name__ in names for c in type(obj).__mro__)


def is_langchain(obj: Any) -> bool:
    return _has_class(obj, "langchain_core", ("Runnable",))


def is_llamaindex(obj: Any) -> bool:
    return _has_class(obj, "llama_index", ("BaseQueryEngine", "BaseChatEngine"))


def framework_pipeline(obj: Any, input_key: str | None = None) -> Callable[..., dict[str, Any]] | None:
    """The function that asks `obj` a question, if it is a LangChain runnable or a LlamaIndex query or chat engine;
    None otherwise. A retriever alone (it gives documents, no answer) is refused."""
    if _has_class(obj, "langchain_core", ("BaseRetriever",)) or _has_class(obj, "llama_index", ("BaseRetriever",)):
        raise ConfigError(f"{type(obj).__name__} is a retriever: it gives documents but no answer; give the chain or "
                          "query engine that answers (its retriever's documents are collected as the contexts)")
    if is_langchain(obj):
        return LangChainPipeline(obj, input_key)
    if _has_class(obj, "llama_index", ("BaseChatEngine",)):
        return ChatEnginePipeline(obj)
    if is_llamaindex(obj):
        return lambda question: response_fields(obj.query(question))
    return None


class ChatEnginePipeline:
    """A LlamaIndex chat engine: `chat(question, chat_history=...)`, the history given each time (it replaces the
    engine's memory), one call at a time (the memory is the engine's own)."""

    history_parameter = "history"

    def __init__(self, engine: Any):
        self.engine = engine
        self._lock = threading.Lock()

    def __call__(self, question: str, history: list[dict[str, str]] | None = None) -> dict[str, Any]:
        from llama_index.core.llms import ChatMessage  # noqa: PLC0415 - the engine's own library

        messages = [ChatMessage(role=m["role"], content=m["content"]) for m in history or []]
        with self._lock:
            return response_fields(self.engine.chat(question, chat_history=messages))


class LangChainPipeline:
    def __init__(self, chain: Any, input_key: str | None = None):
        self.chain = chain
        self.input_key = input_key if input_key is not None else _input_key(chain)
        fields = _input_fields(chain) if self.input_key is not None else {}
        self.history_key = next((k for k in HISTORY_KEYS if k in fields), None)
        self.history_parameter = "history" if self.history_key is not None else None

    def __call__(self, question: str, history: list[dict[str, str]] | None = None) -> dict[str, Any]:
        from langchain_core.callbacks import BaseCallbackHandler  # noqa: PLC0415 - the chain's own library

        retrieved: list[Any] = []

        class Documents(BaseCallbackHandler):
            def on_retriever_end(self, documents, **kwargs) -> None:  # noqa: ANN001 - LangChain's signature
                retrieved.extend(documents)

        given: Any = question if self.input_key is None else {self.input_key: question}
        if self.history_key is not None:
            from langchain_core.messages import convert_to_messages  # noqa: PLC0415

            given[self.history_key] = convert_to_messages(history or [])
        output = self.chain.invoke(given, config={"callbacks": [Documents()]})
        fields = framework_record(output) if isinstance(output, Mapping) else {"answer": answer_text(output)}
        if isinstance(output, Mapping) and "contexts" not in fields:
            fields.pop("context", None)  # text the chain formatted from its documents: the documents are read
        if "contexts" not in fields:
            fields.update(documents_fields(retrieved))
        return {k: fields[k] for k in ("answer", "contexts", "retrieved_context_ids") if k in fields}


def _input_fields(chain: Any) -> dict[str, Any]:
    """The keys of the object the chain takes ({} when it takes the question itself, or its schema cannot be drawn)."""
    try:
        schema = chain.get_input_jsonschema() if hasattr(chain, "get_input_jsonschema") else \
            chain.input_schema.model_json_schema()
    except Exception:  # noqa: BLE001 - a chain whose schema cannot be drawn: ask it with the question itself
        return {}
    return (schema.get("properties") if schema.get("type") == "object" else None) or {}


def _input_key(chain: Any) -> str | None:
    """None (the chain takes the question itself) or the key of the object it takes (besides its history's)."""
    fields = _input_fields(chain)
    if not fields:
        return None
    for key in INPUT_KEYS:
        if key in fields:
            return key
    asked = [k for k in fields if k not in HISTORY_KEYS]
    if len(asked) == 1:
        return asked[0]
    raise ConfigError(f"the chain takes an object with {', '.join(sorted(fields))}: none is the question ("
                      f"{', '.join(INPUT_KEYS)}); name it with input_key=, or wrap the chain in a function of the "
                      "question")
