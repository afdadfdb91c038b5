"""A conversation row as the samples of its turns (docs/conversations.md).

The chat format people already log: a row with `messages`, each `{"role": "user" | "assistant" | "system" | "tool",
"content": ...}` in order. An assistant message that follows a user message is a turn and is scored; it carries the
`contexts` it retrieved (any name a sample's contexts take: `retrieved_contexts`, `retrieval_context`, ...), and may
carry the turn's `reference`, its `standalone_question` (the user's message rewritten to stand alone: given, the run
does not write one), `retrieved_context_ids` / `reference_context_ids`. An assistant message without contexts takes
the `tool` messages between its user message and itself as its contexts (a retrieval tool's results); without either,
it has none. An assistant message with no text (a tool call) is not a turn; nor is one before any user message (a
greeting), which stays in the history. The row's `id` names the conversation (without one, it is named by its user
messages: "c-" and 10 hex digits), its `category` and `language` apply to every turn.

Each turn is a Sample with id "<conversation>#<turn>" and a Turn (data/conversation_models.py). Errors name the row,
the message and the field: "chats.jsonl, line 3, field 'messages[4].contexts[0]': expected a string, got int".
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..core.errors import DatasetError
from .column_map import type_name
from .conversation_models import ROLES, Message, Turn
from .field_check import near_miss
from .sample_record import ID_FIELDS, sample_from_dict
from .schema import FIELD_ALIASES, Sample

MESSAGES = "messages"
STANDALONE = "standalone_question"
# What an assistant message may carry for its turn, under the names a sample's fields take.
TURN_FIELDS: tuple[str, ...] = ("contexts", "reference", *sorted(ID_FIELDS))
_TURN_NAMES = frozenset(n for f in TURN_FIELDS for n in (f, *FIELD_ALIASES[f]))
# Keys of a chat message that are read, or known and left unread (OpenAI's and LangChain's message fields).
_MESSAGE_KEYS = frozenset({"role", "content", STANDALONE, *_TURN_NAMES,
                           "name", "id", "tool_calls", "tool_call_id", "function_call", "metadata", "meta",
                           "refusal", "audio", "annotations"})
_ROW_FIELDS = ("id", "category", "language")


def is_conversation(record: object) -> bool:
    """A row in the chat format: a `messages` list."""
    return isinstance(record, Mapping) and isinstance(record.get(MESSAGES), list)


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


def _conversation_id(d: Mapping[str, Any], messages: list[Message], path: str, line: int | None) -> str:
    raw = d.get("id")
    if raw is not None and (not isinstance(raw, (str, int)) or isinstance(raw, bool)):
        raise DatasetError(path, line, "id", f"expected a string or integer, got {type_name(raw)}")
    given = str(raw).strip() if raw is not None else ""
    if given:
        return given
    said = "\n".join(" ".join(m.content.split()) for m in messages if m.role == "user")
    return "c-" + hashlib.sha256(said.encode("utf-8")).hexdigest()[:10]


def _check_keys(message: Mapping[str, Any], path: str, line: int | None, where: str) -> None:
    """A near miss of a turn field the message lacks ("contxts") is refused, as a sample row's is."""
    for key in message:
        if key in _MESSAGE_KEYS or not isinstance(key, str):
            continue
        meant = near_miss(key, [n for n in (*TURN_FIELDS, STANDALONE, "role", "content") if n not in message])
        if meant:
            raise DatasetError(path, line, f"{where}.{key}", f"unknown field; did you mean '{meant}'?")


def conversation_samples(d: Mapping[str, Any], *, path: str = "<memory>", line: int | None = None) -> list[Sample]:
    """The samples of a conversation row's turns (see the module docstring), in order; DatasetError naming the
    message and field of a bad one, or the row when it has no turn to score."""
    raw = d[MESSAGES]
    messages: list[Message] = []
    turns: list[tuple[int, int, Mapping[str, Any]]] = []  # (its user message's index, its own, the message)
    last_user: int | None = None
    for i, m in enumerate(raw):
        where = f"{MESSAGES}[{i}]"
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
        own = [n for n in (*_TURN_NAMES, STANDALONE) if n in m]
        if own and role != "assistant":
            raise DatasetError(path, line, f"{where}.{own[0]}", f"only an assistant message carries {own[0]} (its "
                                                                 "turn's)")
        messages.append(Message(role=role, content=text))
        if role == "user":
            last_user = i
        elif role == "assistant" and text.strip() and last_user is not None:
            turns.append((last_user, i, m))
    if not turns:
        raise DatasetError(path, line, MESSAGES, "no turn to score: no assistant message with text follows a user "
                                                 "message")
    conversation = _conversation_id(d, messages, path, line)
    row = {k: d[k] for k in _ROW_FIELDS[1:] if k in d}
    out = []
    for n, (u, a, m) in enumerate(turns, 1):
        where = f"{MESSAGES}[{a}]"
        standalone = m.get(STANDALONE)
        if standalone is not None and (not isinstance(standalone, str) or not standalone.strip()):
            raise DatasetError(path, line, f"{where}.{STANDALONE}", "expected a non-empty string, got "
                                                                    f"{type_name(standalone)}")
        fields = {k: v for k, v in m.items() if k in _TURN_NAMES}
        if not any(n_ in fields for n_ in (*FIELD_ALIASES["contexts"], "contexts")):
            fields["contexts"] = [x.content for x in messages[u + 1:a] if x.role == "tool" and x.content.strip()]
        record = {**row, **fields, "id": f"{conversation}#{n}", "question": standalone or messages[u].content,
                  "answer": messages[a].content}
        try:
            sample = sample_from_dict(record, path=path, line=line)
        except DatasetError as e:
            field = e.field if e.field in ("category", "language") or e.field is None else f"{where}.{e.field}"
            if e.field == "question":
                field = f"{MESSAGES}[{u}].content"
            raise DatasetError(path, line, field, e.detail, unit=e.unit) from None
        turn = Turn(conversation=conversation, turn=n, turns=len(turns), user_message=messages[u].content,
                    history=messages[:u], standalone_given=standalone is not None)
        out.append(sample.model_copy(update={"turn": turn}))
    return out
