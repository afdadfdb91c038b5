"""One chat message read and checked (the chat format's `{"role", "content"}`), and a conversation's id: shared by
the conversation rows (data/conversations.py) and the turn rows, a sample with its `history` (data/sample_record.py).
Errors name the message and its field: "field 'messages[4].role': expected one of user, assistant, system, tool"."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import DatasetError
from .column_map import type_name
from .conversation_models import ROLES, Message, Turn
from .conversation_shapes import HISTORY as CHAT_HISTORY, history_messages
from .field_check import TURN_ROW_FIELDS, near_miss
from .schema import FIELD_ALIASES

HISTORY, STANDALONE, CONVERSATION = TURN_ROW_FIELDS  # a turn row's earlier messages, its standalone question, its
# conversation's id (data/sample_record.py); an assistant message of a conversation row may give its STANDALONE too
# What an assistant message may carry for its turn, under the names a sample's fields take.
TURN_FIELDS: tuple[str, ...] = ("contexts", "reference", "retrieved_context_ids", "reference_context_ids")
TURN_NAMES = frozenset(n for f in TURN_FIELDS for n in (f, *FIELD_ALIASES[f]))
# Keys of a chat message that are read, or known and left unread (OpenAI's and LangChain's message fields).
_MESSAGE_KEYS = frozenset({"role", "content", STANDALONE, *TURN_NAMES,
                           "name", "id", "tool_calls", "tool_call_id", "function_call", "metadata", "meta",
                           "refusal", "audio", "annotations"})


def message_text(content: Any, path: str, line: int | None, field: str) -> str:
    """A message's text: a string, or the text parts of a list of parts (OpenAI's [{"type": "text", "text": ...}]);
    null (an assistant's tool call) is ""."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif not (isinstance(part, Mapping) and part.get("type") not in (None, "text")):
                raise DatasetError(path, line, f"{field}[{i}]", f"expected a text part, got {type_name(part)}")
        return "\n".join(texts)
    raise DatasetError(path, line, field, f"expected a string or a list of text parts, got {type_name(content)}")


def _check_keys(message: Mapping[str, Any], path: str, line: int | None, where: str) -> None:
    """A near miss of a turn field the message lacks, under any of its names ("contxts", "retreival_context"), is
    refused, as a sample row's is."""
    lacking = [n for f in TURN_FIELDS if not any(n in message for n in (f, *FIELD_ALIASES[f]))
               for n in (f, *FIELD_ALIASES[f])] + [n for n in (STANDALONE, "role", "content") if n not in message]
    for key in message:
        if key in _MESSAGE_KEYS or not isinstance(key, str):
            continue
        meant = near_miss(key, lacking)
        if meant:
            raise DatasetError(path, line, f"{where}.{key}", f"unknown field; did you mean '{meant}'?")


def read_message(m: Any, path: str, line: int | None, where: str, turn_fields: bool = True) -> Message:
    """The message `m` at `where` ("messages[3]"), checked: a role of ROLES, text content (null only for an
    assistant's tool call), no near-miss key, turn fields (contexts, reference, ...) on an assistant message only, and
    none at all where `turn_fields` is false (a turn row's history: its turn's are the row's own)."""
    if not isinstance(m, Mapping):
        raise DatasetError(path, line, where, f"expected a message object, got {type_name(m)}")
    role = m.get("role")
    if role not in ROLES:
        got = "no role" if role is None else f"role {role!r}"
        raise DatasetError(path, line, f"{where}.role", f"expected one of {', '.join(ROLES)}; got {got}")
    if "content" not in m and role != "assistant":
        raise DatasetError(path, line, f"{where}.content", "missing required field")
    _check_keys(m, path, line, where)
    text = message_text(m.get("content"), path, line, f"{where}.content")
    own = [n for n in (*TURN_NAMES, STANDALONE) if n in m]
    if own and (role != "assistant" or not turn_fields):
        whose = "its turn's" if turn_fields else "a turn row's history is read for its text alone"
        raise DatasetError(path, line, f"{where}.{own[0]}", f"only an assistant message carries {own[0]} ({whose})"
                           if turn_fields else f"{own[0]} in a history message is not read ({whose})")
    return Message(role=role, content=text)


def conversation_id(raw: Any, messages: Iterable[Message], path: str, line: int | None, field: str = "id") -> str:
    """A conversation's id: the one given (a string or an integer), else named by the user messages in `messages`
    ("c-" and 10 hex digits of their sha256, whitespace runs as one space), so the same conversation gets the same id
    in every run (a turn row passes its conversation's first user message alone: its turns get one id)."""
    if raw is not None and (not isinstance(raw, (str, int)) or isinstance(raw, bool)):
        raise DatasetError(path, line, field, f"expected a string or integer, got {type_name(raw)}")
    given = str(raw).strip() if raw is not None else ""
    if given:
        return given
    said = "\n".join(" ".join(m.content.split()) for m in messages if m.role == "user")
    return "c-" + hashlib.sha256(said.encode("utf-8")).hexdigest()[:10]


def turn_of(d: Mapping[str, Any], question: str, path: str, line: int | None) -> Turn | None:
    """A turn row's place in its conversation (None for a row without `history`): its earlier messages (`history`,
    checked message by message), the turn's number (one more than the replies to a user message in its history), its
    conversation's id (`conversation_id`, else named by the conversation's first user message, so the rows of one
    conversation share it), and whether its question was given as the standalone one (`standalone_question`)."""
    name = HISTORY if d.get(HISTORY) is not None else CHAT_HISTORY  # a chat chain's output gives `chat_history`
    if d.get(name) is None:
        if d.get(STANDALONE) is not None:
            raise DatasetError(path, line, STANDALONE, f"a standalone question belongs to a turn of a conversation: "
                                                       f"give the turn's earlier messages as `{HISTORY}` ([] for none)")
        return None
    raw = history_messages(d[name], path, line, name)  # LangChain's, LlamaIndex's, ... messages as chat messages
    if not isinstance(raw, list):
        raise DatasetError(path, line, name, f"expected a list of messages, got {type_name(raw)}")
    history = [read_message(m, path, line, f"{name}[{i}]", turn_fields=False) for i, m in enumerate(raw)]
    replies, asked = 0, False
    for m in history:
        asked = asked or m.role == "user"
        replies += m.role == "assistant" and bool(m.content.strip()) and asked
    first = next((m for m in history if m.role == "user"), Message(role="user", content=question))
    n = replies + 1
    return Turn(conversation=conversation_id(d.get(CONVERSATION), [first], path, line, CONVERSATION), turn=n,
                turns=n, user_message=question, history=history, standalone_given=d.get(STANDALONE) is not None)
