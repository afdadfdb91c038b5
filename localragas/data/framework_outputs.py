"""What a LangChain chain or a LlamaIndex query engine returns, read as a sample's fields. Duck-typed: neither library
is imported here (nor needed to read what they returned).

- LangChain: a `Document` (`page_content`, optional `id`); a chain's output dict with its documents under `context`
  (create_retrieval_chain, an LCEL chain's RunnableParallel), `source_documents` (RetrievalQA) or `documents`, the
  answer under `answer`, `result`, `output`, `output_text` or `text` (a string, or a message with `content`), and the
  question under `input`, `question` or `query`.
- LlamaIndex: a `Response` (`response`, `source_nodes`: NodeWithScore, each a node with `get_content()` and
  `node_id`); a `StreamingResponse` is read through its `get_response()`.

The retrieved documents' ids become `retrieved_context_ids` when every document has one.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ANSWER_KEYS = ("answer", "result", "output", "output_text", "text", "response")
CONTEXT_KEYS = ("contexts", "context", "source_documents", "documents", "source_nodes", "retrieved_contexts")


def is_document(value: Any) -> bool:
    """A LangChain Document, a LlamaIndex node or NodeWithScore."""
    return (isinstance(getattr(value, "page_content", None), str)
            or callable(getattr(value, "get_content", None)) and not isinstance(value, type))


def is_response(value: Any) -> bool:
    """A LlamaIndex Response or StreamingResponse (or a chat engine's AgentChatResponse)."""
    return hasattr(value, "source_nodes") and (hasattr(value, "response") or hasattr(value, "response_gen"))


def document_text(doc: Any) -> str:
    if isinstance(getattr(doc, "page_content", None), str):
        return doc.page_content
    node = getattr(doc, "node", doc)  # a NodeWithScore holds its node
    return node.get_content()


def document_id(doc: Any) -> str | None:
    node = getattr(doc, "node", doc)
    value = getattr(node, "id", None) if hasattr(doc, "page_content") else getattr(node, "node_id", None)
    return str(value) if isinstance(value, (str, int)) and str(value) else None


def documents_fields(docs: list[Any]) -> dict[str, Any]:
    """{"contexts": [text, ...]} and, when every document has an id, "retrieved_context_ids"."""
    out: dict[str, Any] = {"contexts": [document_text(d) for d in docs]}
    ids = [document_id(d) for d in docs]
    if docs and all(i is not None for i in ids):
        out["retrieved_context_ids"] = ids
    return out


def _finished(response: Any) -> Any:
    """A StreamingResponse read to its end (get_response()); any other Response as it is."""
    if getattr(response, "response", None) is None and callable(getattr(response, "get_response", None)):
        return response.get_response()
    return response


def answer_text(value: Any) -> Any:
    """A message's content (AIMessage), a Response's text; anything else as it is (a string, or left to be
    refused by the sample's checks)."""
    if is_response(value):
        return _finished(value).response
    content = getattr(value, "content", None)
    if isinstance(content, str) and not isinstance(value, (str, Mapping)):
        return content
    return value


def response_fields(response: Any) -> dict[str, Any]:
    """A LlamaIndex Response as {"answer", "contexts", ("retrieved_context_ids")}."""
    response = _finished(response)
    return {"answer": answer_text(response), **documents_fields(list(response.source_nodes or []))}


def is_framework_record(record: Mapping[str, Any]) -> bool:
    """A mapping holding LangChain documents, a message or a LlamaIndex Response: a chain's output."""
    for value in record.values():
        if is_response(value) or is_document(value):
            return True
        if isinstance(value, list) and value and all(is_document(v) for v in value):
            return True
        if hasattr(value, "content") and getattr(value, "type", None) == "ai":
            return True
    return False


def framework_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A chain's output (or a dict holding a Response or documents) as a plain record: the answer text under
    `answer`, the documents' texts as `contexts` (and their ids). Other keys stay as they are (the question is read
    under any of its names, `input` and `query` among them)."""
    out: dict[str, Any] = {}
    derived: list[tuple[str, Any]] = []  # after the keys given as they are, which win
    for key, value in record.items():
        if key in CONTEXT_KEYS and isinstance(value, list) and value and all(is_document(v) for v in value):
            derived += documents_fields(value).items()
        elif key in ANSWER_KEYS and is_response(value):
            derived += response_fields(value).items()
        elif key in ANSWER_KEYS:
            derived.append(("answer", answer_text(value)))
        else:
            out[key] = value
    for name, value in derived:
        out.setdefault(name, value)
    return out
