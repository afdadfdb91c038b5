"""A conversation row as the samples of its turns (docs/conversations.md).

The chat format people already log: a row with `messages`, each `{"role": "user" | "assistant" | "system" | "tool",
"content": ...}` in order. An assistant message that follows a user message is a turn and is scored; it carries the
`contexts` it retrieved (any name a sample's contexts take: `retrieved_contexts`, `retrieval_context`, ...), and may
carry the turn's `reference`, its `standalone_question` (the user's message rewritten to stand alone: given, the run
does not write one), `retrieved_context_ids` / `reference_context_ids`. An assistant message without contexts takes
the `tool` messages between its user message and itself as its contexts (a retrieval tool's results); without either,
it has none. An assistant message that only calls a tool (no text, `tool_calls` given) is not a turn (an empty reply
without one is, scored as the empty answer it is), nor is one before any user message (a greeting): both stay in the
history. The row's `id` names the conversation (without one, it is named by its user
messages: "c-" and 10 hex digits), its `category` and `language` apply to every turn, and its `reference` (the
conversation's expected outcome, as ragas's multi-turn samples give it) is the last turn's when that turn's own message
gives none. The other shapes a conversation comes in (ragas, deepeval, LangChain, LlamaIndex) are read into this one
by data/conversation_shapes.py, and their errors name the row as given.

Each turn is a Sample with id "<conversation>#<turn>" and a Turn (data/conversation_models.py). Errors name the row,
the message and the field: "chats.jsonl, line 3, field 'messages[4].contexts[0]': expected a string, got int".
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import DatasetError
from .column_map import type_name
from .chat_messages import STANDALONE, TURN_NAMES, conversation_id, read_message
from .conversation_models import Message, Turn
from .conversation_shapes import ChatRow, as_chat, conversation_field
from .sample_record import refuse_failed_row, sample_from_dict
from .schema import FIELD_ALIASES, Sample

MESSAGES = "messages"
_ROW_FIELDS = ("id", "category", "language")


def is_conversation(record: object) -> bool:
    """A conversation row: the chat format's `messages` list, or one of the shapes conversation_shapes reads."""
    return conversation_field(record) is not None


def _tool_step(m: Mapping[str, Any], message: Message) -> bool:
    """An assistant message that only calls a tool (no text, `tool_calls` or `function_call` given): a step of its
    turn, not a reply. An empty reply without one is a turn (scored as the empty answer it is, never dropped)."""
    return not message.content.strip() and bool(m.get("tool_calls") or m.get("function_call"))


def _outcome(d: Mapping[str, Any], last: Mapping[str, Any], path: str, line: int | None) -> str | None:
    """The row's `reference` (the conversation's expected outcome) as its last turn's, when that turn's message gives
    none of its own; a different one of its own is an error."""
    given = d.get("reference")
    if given is None:
        return None
    if not isinstance(given, str):
        raise DatasetError(path, line, "reference", f"expected a string, got {type_name(given)}")
    own = [n for n in ("reference", *FIELD_ALIASES["reference"]) if last.get(n) is not None]
    if own and last[own[0]] != given:
        raise DatasetError(path, line, "reference", "the conversation's reference is its last turn's, and that turn "
                                                    "gives another of its own")
    return None if own else given


def conversation_samples(d: Mapping[str, Any], *, path: str = "<memory>", line: int | None = None) -> list[Sample]:
    """The samples of a conversation row's turns (see the module docstring), in order; DatasetError naming the
    message and field of a bad one as the row gave it, or the row when it has no turn to score (or a turn run-rag
    failed to ask)."""
    refuse_failed_row(d, path, line)
    chat = as_chat(d, path, line)
    try:
        return _turn_samples(chat, path, line)
    except DatasetError as e:
        raise DatasetError(e.path, e.line, chat.named(e.field), e.detail, unit=e.unit) from None


def _turn_samples(chat: ChatRow, path: str, line: int | None) -> list[Sample]:
    d = chat.row
    raw = d[MESSAGES]
    messages: list[Message] = []
    turns: list[tuple[int, int, Mapping[str, Any]]] = []  # (its user message's index, its own, the message)
    last_user: int | None = None
    for i, m in enumerate(raw):
        message = read_message(m, path, line, f"{MESSAGES}[{i}]")
        messages.append(message)
        if message.role == "user":
            last_user = i
        elif message.role == "assistant" and last_user is not None and not _tool_step(m, message):
            turns.append((last_user, i, m))
    if not turns:
        raise DatasetError(path, line, MESSAGES, "no turn to score: no assistant reply follows a user "
                                                 "message")
    conversation = conversation_id(d.get("id"), messages, path, line)
    row = {k: d[k] for k in _ROW_FIELDS[1:] if k in d}
    outcome = _outcome(d, turns[-1][2], path, line)
    out = []
    for n, (u, a, m) in enumerate(turns, 1):
        where = f"{MESSAGES}[{a}]"
        if n == len(turns) and outcome is not None:
            m = {**m, "reference": outcome}
        standalone = m.get(STANDALONE)
        if standalone is not None and (not isinstance(standalone, str) or not standalone.strip()):
            raise DatasetError(path, line, f"{where}.{STANDALONE}", "expected a non-empty string, got "
                                                                    f"{type_name(standalone)}")
        fields = {k: v for k, v in m.items() if k in TURN_NAMES}
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
