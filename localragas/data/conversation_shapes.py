"""Conversations in the shapes other tools give them, read as the chat format data/conversations.py turns into
samples (docs/conversations.md, "Other shapes"). Duck-typed: no library below is imported (nor needed).

- ragas: a MultiTurnSample, `user_input` a list of messages (HumanMessage / AIMessage / ToolMessage, or their dicts
  {"content", "type": "human" | "ai" | "tool", "tool_calls"}); its `reference` (the conversation's expected outcome) is
  read as the last turn's reference; `reference_topics`, `reference_tool_calls` and `rubrics` are known, not read.
- deepeval: a ConversationalTestCase, `turns` a list of Turns ({"role": "user" | "assistant", "content",
  "retrieval_context"}) or, in its older shape, of LLMTestCases (each {"input", "actual_output", "retrieval_context",
  "expected_output"}: one exchange); `expected_outcome` is read as ragas's `reference` is; `scenario`, `context`,
  `chatbot_role`, `user_description`, `name`, `metadata`, ... are known, not read.
- LangChain: BaseMessages (`.type` human / ai / system / tool / chat, `.content`; an AIMessage's
  `response_metadata` or `additional_kwargs` may hold its turn's `contexts` or `source_documents`), their model_dump()
  dicts, and messages_to_dict's {"type", "data": {...}}.
- LlamaIndex: ChatMessages (`.role` a MessageRole: user / assistant / system / tool, ...; `.blocks` of text blocks;
  `additional_kwargs` read as LangChain's are), and their dicts.

A row holds one under `messages` or `chat_history` (any of the messages above, mixed or not), `turns` (deepeval) or
`user_input` (ragas); a table's cell may hold it as text (JSON, or the Python literal pandas writes). A row giving a
question beside its `chat_history` (a LangChain or LlamaIndex chat chain's output) is a turn row instead, a sample
with its history (data/chat_messages.py: turn_of), whose history is read by history_messages() as a turn row's
`history` is.

as_chat() gives the row in the chat format with where each message came from, so an error names the row as given
("turns[2].retrieval_context[0]", "user_input[3].type").
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import DatasetError
from .column_map import type_name
from .conversation_models import ROLES
from .framework_outputs import CONTEXT_KEYS, documents_fields, is_document
from .schema import FIELD_ALIASES

MESSAGES = "messages"  # the chat format's own field (data/conversations.py)
HISTORY = "chat_history"
CONVERSATION_FIELDS = (MESSAGES, HISTORY, "turns", "user_input")
# The conversation's expected outcome (ragas's multi-turn `reference`, deepeval's `expected_outcome`): the last turn's
# reference.
OUTCOME_FIELDS = ("reference", "expected_outcome", "expectedOutcome")
# A role under the other names tools give it (ragas's and LangChain's `type`, LlamaIndex's MessageRole, OpenAI's).
ROLE_NAMES: dict[str, str] = {
    "user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "chatbot": "assistant",
    "model": "assistant", "system": "system", "developer": "system", "tool": "tool", "function": "tool"}
# Fields of the messages above that localragas knows and leaves unread.
_UNREAD = frozenset({
    "type", "additional_kwargs", "response_metadata", "example", "invalid_tool_calls", "usage_metadata", "artifact",
    "status", "blocks", "user_id", "userId", "tools_called", "toolsCalled", "mcp_tools_called",
    "mcp_resources_called", "mcp_prompts_called", "additional_metadata", "additionalMetadata", "audio",
    "expected_tools", "token_cost", "completion_time", "comments", "tags", "multimodal", "should_evaluate"})
_RENAMED = {"retrievalContext": "retrieval_context", "expectedOutput": "expected_output",
            "actualOutput": "actual_output"}  # deepeval's camelCase (its JSON datasets)
_SHAPE_KEYS = _UNREAD | _RENAMED.keys()  # a role-keyed message holding one of these is another tool's
_CONTEXT_NAMES = frozenset({"contexts", *FIELD_ALIASES["contexts"]})
_ATTRIBUTES = ("role", "type", "content", "blocks", "additional_kwargs", "response_metadata", "retrieval_context",
               "tool_calls", "tool_call_id", "name", "id", "metadata", "input", "actual_output", "expected_output",
               "context", "llm_test_case")  # read from a message object with no model_dump() (a duck-typed one)
_FIELD = re.compile(r"^messages\[(\d+)\](?:\.([A-Za-z_]+))?(.*)$", re.S)


@dataclass
class ChatRow:
    """A conversation row in the chat format, with where each of its messages came from in the row as given."""

    row: dict[str, Any]
    source: str = MESSAGES  # the row's field that held the messages
    places: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # each message's place, its fields' names
    names: dict[str, str] = field(default_factory=dict)  # a row field's name as given ("reference": "expected_outcome")

    def named(self, field_name: str | None) -> str | None:
        """A field of the chat row ("messages[3].contexts[0]") named as the row gave it ("turns[1].retrieval_context[0]")."""
        if field_name is None:
            return None
        if field_name == MESSAGES:
            return self.source
        m = _FIELD.match(field_name)
        if m is None or not self.places:
            return self.names.get(field_name, field_name)
        place, names = self.places[int(m.group(1))]
        key = m.group(2)
        return place + (f".{names.get(key, key)}" if key else "") + m.group(3)


def conversation_field(record: Any) -> str | None:
    """The field of a row that holds a conversation in one of the shapes read (None: not a conversation). A
    `user_input` is one when it is a list of messages (ragas's multi-turn), never a question."""
    if not isinstance(record, Mapping):
        return None
    for name in CONVERSATION_FIELDS:
        value = record.get(name)
        if name == HISTORY and value is not None and any(
                isinstance(record.get(n), str) for n in ("question", *FIELD_ALIASES["question"])):
            return None  # a chat chain's output: a turn row (its question, answer and history)
        if name == "user_input":
            listed = _listed(value)
            if listed and _is_history(listed):
                return name
        elif isinstance(value, (list, tuple)) or _array(value) or isinstance(value, str) and _list_text(value):
            return name
    return None


def is_chat_history(items: Any) -> bool:
    """A list of chat messages in any shape above (LangChain's, LlamaIndex's, ragas's, role dicts): one conversation
    given where a row is expected."""
    return isinstance(items, (list, tuple)) and _is_history(list(items))


def as_chat(record: Mapping[str, Any], path: str, line: int | None) -> ChatRow:
    """The conversation row `record` (conversation_field names its messages) in the chat format."""
    source = conversation_field(record)
    assert source is not None
    raw = _listed(record[source])
    if raw is None:
        raw = _parsed(record[source], path, line, source)
    messages: list[dict[str, Any]] = []
    places: list[tuple[str, dict[str, str]]] = []
    for i, item in enumerate(raw):
        for message, place, names in _messages(item, f"{source}[{i}]", path, line):
            messages.append(message)
            places.append((place, names))
    row = {k: v for k, v in record.items() if k in ("id", "category", "language")}
    chat = ChatRow(row={**row, MESSAGES: messages}, source=source, places=places)
    outcome = [n for n in OUTCOME_FIELDS if record.get(n) is not None]
    for other in outcome[1:]:
        if record[other] != record[outcome[0]]:
            raise DatasetError(path, line, outcome[0], f"'{outcome[0]}' and '{other}' are both given, with different "
                                                       "values (each is the conversation's expected outcome)")
    if outcome:
        chat.row["reference"] = record[outcome[0]]
        chat.names["reference"] = outcome[0]
    return chat


def history_messages(value: Any, path: str, line: int | None, field: str) -> Any:
    """A turn row's history (`history`, a chat chain's `chat_history`) in any shape above, as chat-format messages
    for data/chat_messages.py to check; their text and role alone are read (what the shapes' metadata held for their
    own turn is not kept). A value that is no list is given back as it is, for the caller to refuse."""
    raw = _listed(value)
    if raw is None and isinstance(value, str) and _list_text(value):
        raw = _parsed(value, path, line, field)
    if raw is None:
        return value
    out: list[Any] = []
    for i, item in enumerate(raw):
        if isinstance(item, Mapping) and item.get("role") in ROLES and not (item.keys() & _SHAPE_KEYS):
            out.append(item)  # the chat format's own, checked as it is
            continue
        out.extend({k: v for k, v in message.items() if k not in _CONTEXT_NAMES and k != "retrieved_context_ids"}
                   for message, _, _ in _messages(item, f"{field}[{i}]", path, line))
    return out


def _is_history(items: list[Any]) -> bool:
    return bool(items) and all(_is_message(m) for m in items)


def _is_message(m: Any) -> bool:
    """A chat message in any shape read (role or type, and content / blocks / data), or an exchange (deepeval)."""
    if isinstance(m, Mapping):
        if isinstance(m.get("data"), Mapping) and "type" in m or "llm_test_case" in m:
            return True
        if any(n in m for f in ("question", "answer") for n in (f, *FIELD_ALIASES[f])):
            return False  # a sample's row (its `type` column beside a `content` one is no message's)
        role = m.get("role", m.get("type"))
        return isinstance(getattr(role, "value", role), str) and any(k in m for k in ("content", "blocks"))
    if isinstance(m, (str, bytes)) or isinstance(m, type):
        return False
    role = getattr(m, "role", None) or getattr(m, "type", None)
    return isinstance(getattr(role, "value", role), str) and (hasattr(m, "content") or hasattr(m, "blocks"))


def _array(value: Any) -> bool:
    return hasattr(value, "tolist") and not isinstance(value, (str, bytes))


def _list_text(value: str) -> bool:
    return value.lstrip().startswith("[")


def _listed(value: Any) -> list[Any] | None:
    """A list given as a list, a tuple, an array, or as text of a list of messages (a table's cell); else None."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if _array(value):
        return list(value.tolist())
    if isinstance(value, str) and _list_text(value):
        try:
            parsed = _parse(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) and _is_history(parsed) else None
    return None


def _parse(text: str) -> Any:
    """A cell's text as JSON, or as the Python literal pandas writes a list as; ValueError if neither."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(text) from None


def _parsed(value: Any, path: str, line: int | None, source: str) -> list[Any]:
    """A `messages` / `turns` cell given as text: its list, or the error naming the field."""
    try:
        parsed = _parse(value)
    except ValueError:
        raise DatasetError(path, line, source, "expected a list of messages, got text that is neither JSON nor a "
                                               "Python list") from None
    if not isinstance(parsed, list):
        raise DatasetError(path, line, source, f"expected a list of messages, got {type_name(parsed)}")
    return parsed


def _fields(item: Any, place: str, path: str, line: int | None) -> dict[str, Any]:
    """A message object as a dict: pydantic's model_dump(), a dataclass's fields, else the attributes read."""
    if isinstance(item, Mapping):
        return dict(item)
    if isinstance(item, (str, bytes, int, float, bool)) or item is None or isinstance(item, type):
        raise DatasetError(path, line, place, f"expected a message, got {type_name(item)}")
    if callable(getattr(item, "model_dump", None)):
        return dict(item.model_dump())
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return dataclasses.asdict(item)
    return {k: getattr(item, k) for k in _ATTRIBUTES if hasattr(item, k)}


def _messages(item: Any, place: str, path: str, line: int | None) -> list[tuple[dict[str, Any], str, dict[str, str]]]:
    """The chat-format messages of one item of a conversation, each with its place and its fields' names there."""
    if isinstance(item, Mapping) and item.get("role") in ROLES and not (item.keys() & _SHAPE_KEYS):
        return [(dict(item), place, {})]  # the chat format's own, left to its reader
    m = _fields(item, place, path, line)
    if "llm_test_case" in m:  # deepeval's oldest shape: Message(llm_test_case=..., should_evaluate=...)
        return _messages(m["llm_test_case"], f"{place}.llm_test_case", path, line)
    if isinstance(m.get("data"), Mapping) and "type" in m and "content" not in m:  # LangChain's messages_to_dict
        return _messages({**m["data"], "type": m["type"]}, f"{place}.data", path, line)
    for camel, name in _RENAMED.items():
        if camel in m and name not in m:
            m[name] = m.pop(camel)
    names = {name: camel for camel, name in _RENAMED.items() if camel in item} if isinstance(item, Mapping) else {}
    if isinstance(m.get("retrieval_context"), list):  # deepeval's RetrievedContextData: its `context`
        m["retrieval_context"] = [c.get("context", c) if isinstance(c, Mapping) else c for c in m["retrieval_context"]]
    if "role" not in m and "type" not in m and ("input" in m or "actual_output" in m):
        return _exchange_of(m, place, names)
    role = _role(m, place, path, line)
    content = m.get("content")
    if content is None and m.get("blocks") is not None:
        content = _blocks(m["blocks"], place, path, line)
        names["content"] = "blocks"
    message = {k: v for k, v in m.items() if k not in _UNREAD and k != "role" and v is not None}
    text, calls = _text_of(content, role)
    message.update(role=role, content=text)
    if role == "assistant" and not (message.keys() & _CONTEXT_NAMES):
        message.update(_kept_contexts(m, names))
    if role == "assistant" and not message.get("tool_calls"):  # a tool step, however its shape says so
        given = m.get("additional_kwargs")
        kwargs: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        calls = calls or kwargs.get("tool_calls") or kwargs.get("function_call") or m.get("tools_called")
        if calls:
            message["tool_calls"] = calls
    return [(message, place, names)]


def _exchange_of(m: dict[str, Any], place: str, names: dict[str, str]) -> list[tuple[dict, str, dict[str, str]]]:
    """deepeval's older turn, an LLMTestCase: the user's `input` and the assistant's `actual_output` (with its
    `retrieval_context` and `expected_output`)."""
    user = {"role": "user", "content": m.get("input")}
    reply = {k: v for k, v in m.items() if k not in _UNREAD and k not in ("input", "actual_output", "name")
             and v is not None}
    reply.update(role="assistant", content=m.get("actual_output"))
    return [(user, place, {"content": "input"}),
            (reply, place, {**names, "content": names.get("actual_output", "actual_output")})]


def _role(m: Mapping[str, Any], place: str, path: str, line: int | None) -> str:
    key = "role" if m.get("role") is not None else "type"
    raw = m.get(key)
    name = getattr(raw, "value", raw)  # LlamaIndex's MessageRole
    if isinstance(name, str) and name.endswith("MessageChunk"):  # LangChain's streamed AIMessageChunk, ...
        name = name[: -len("MessageChunk")].lower()
    role = ROLE_NAMES.get(name) if isinstance(name, str) else None
    if role is None:
        others = ", ".join(n for n in ROLE_NAMES if n not in ROLES)
        got = f"no {key}" if raw is None else f"{key} {name!r}"
        raise DatasetError(path, line, f"{place}.{key}", f"expected one of {', '.join(ROLES)} (or {others}); got "
                                                         f"{got}")
    return role


def _blocks(blocks: Any, place: str, path: str, line: int | None) -> list[dict[str, Any]]:
    """LlamaIndex's content blocks as the chat format's parts: a text block's text; any other block (an image) a
    part without text."""
    if not isinstance(blocks, (list, tuple)):
        raise DatasetError(path, line, f"{place}.blocks", f"expected a list of blocks, got {type_name(blocks)}")
    parts = []
    for b in blocks:
        kind = b.get("block_type") if isinstance(b, Mapping) else getattr(b, "block_type", None)
        text = b.get("text") if isinstance(b, Mapping) else getattr(b, "text", None)
        parts.append({"type": "text", "text": text} if kind in (None, "text") else {"type": str(kind)})
    return parts


def _text_of(content: Any, role: str) -> tuple[Any, Any]:
    """(content, tool calls it holds): ragas's AIMessage with tool calls writes its content as {"text", "tool_calls"}
    (EvaluationDataset.to_list: as that JSON's text), read as its text and its calls."""
    if role == "assistant" and isinstance(content, str) and content.startswith('{"text"'):
        try:
            parsed = json.loads(content)
        except ValueError:
            return content, None
        if isinstance(parsed, Mapping) and "tool_calls" in parsed:
            content = parsed
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return content["text"], content.get("tool_calls")
    return content, None


def _kept_contexts(m: Mapping[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The contexts an assistant message keeps in its metadata (LangChain's `response_metadata` or
    `additional_kwargs`, LlamaIndex's `additional_kwargs`): texts, or documents (and their ids)."""
    for holder in ("response_metadata", "additional_kwargs"):
        kept = m.get(holder)
        if not isinstance(kept, Mapping):
            continue
        for key in CONTEXT_KEYS:
            value = kept.get(key)
            if value is None:
                continue
            names["contexts"] = f"{holder}.{key}"
            return _documents(value)
    return {}


def _documents(value: Any) -> dict[str, Any]:
    """A list of texts, LangChain Documents / LlamaIndex nodes, or their dicts ({"page_content", "id"}), as contexts
    and ids; anything else as it is, for the sample's checks to refuse."""
    if isinstance(value, list) and value and all(is_document(d) for d in value):
        return documents_fields(value)
    if isinstance(value, list) and value and all(isinstance(d, Mapping) and "page_content" in d for d in value):
        out: dict[str, Any] = {"contexts": [d["page_content"] for d in value]}
        ids = [d.get("id") for d in value]
        if all(isinstance(i, (str, int)) and str(i) for i in ids):
            out["retrieved_context_ids"] = [str(i) for i in ids]
        return out
    return {"contexts": value}
