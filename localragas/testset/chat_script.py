"""A conversation of a `run-rag` test set (docs/conversations.md#re-running-conversations-run-rag): the user's turns
given, the pipeline's replies to be asked turn by turn, written back in the chat format `eval` reads
(data/conversations.py).

A row is a conversation when it has `messages` (the chat format: user and system messages; assistant and tool
messages, if any, are a past run's and are replaced) or `turns` (a list of the user's messages, each a string or an
object with `content`). Each user message is a turn: the pipeline is asked it with the conversation so far (the system
messages, the earlier user messages and the pipeline's own earlier replies). What a turn is measured against sits on
its user message, or on the assistant message that answered it in a past run (a filled file run again):
`reference` (or its other names), `reference_context_ids`, `standalone_question`; run-rag writes them on the turn's
reply, beside its `content` and `contexts`. An assistant message before the first user message (a greeting) stays
as it is, in the history.

    script = read_script(record, "chats.jsonl", 3)
    row, failure = script.run(ask)   # ask(question, turn_id, history) -> RagReply, raising RowFailure
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import DatasetError
from ..data.column_map import type_name
from ..data.conversation_models import ROLES, Message
from ..data.chat_messages import STANDALONE, conversation_id, message_text
from ..data.conversations import MESSAGES
from ..data.field_check import near_miss
from ..data.sample_record import RAG_ERROR_FIELD
from ..data.schema import FIELD_ALIASES, field_names
from .rag_targets import History, RagReply, RowFailure

TURNS = "turns"
GIVEN = ("reference", "reference_context_ids", STANDALONE)  # a turn's own fields, written on its reply
_GIVEN_NAMES = frozenset(n for f in GIVEN for n in (f, *FIELD_ALIASES.get(f, ())))
# written by run-rag on a reply: refused on a user message
_REPLY_NAMES = frozenset(n for f in ("contexts", "retrieved_context_ids") for n in (f, *FIELD_ALIASES[f]))


def is_script(record: object) -> bool:
    """A conversation row of a test set: `messages` (the chat format) or `turns` (the user's messages) as a list."""
    return isinstance(record, Mapping) and any(isinstance(record.get(k), list) for k in (MESSAGES, TURNS))


@dataclass(frozen=True)
class Step:
    """A message of the script: a user turn (asked; `given` goes onto its reply) or a message kept as it is (a
    system message, a greeting)."""

    message: dict[str, Any]  # as written back (a user message without its turn's fields)
    text: str
    given: dict[str, Any]
    where: str  # its place in the row, for errors: "messages[2]"

    @property
    def asked(self) -> bool:
        return self.message["role"] == "user"


@dataclass(frozen=True)
class Script:
    id: str
    record: dict[str, Any]  # the row's other fields (category, language, meta ...), written back as they are
    steps: list[Step]

    @property
    def turns(self) -> int:
        return sum(s.asked for s in self.steps)

    def run(self, ask: Callable[[str, str, History], RagReply]) -> tuple[dict[str, Any], RowFailure | None]:
        """The conversation asked turn by turn: (its row in the chat format, None), or, when a turn failed, (the row
        with the turns answered before it, every user message and `rag_error` naming the turn, the failure). A turn
        is asked with the id eval gives it, "<conversation>#<turn>"."""
        messages: list[dict[str, Any]] = []
        history: History = []  # what was said before the turn asked: the script's messages and the replies
        failure: RowFailure | None = None
        n = 0
        for step in self.steps:
            if not step.asked:
                messages.append(step.message)
                history.append({"role": step.message["role"], "content": step.text})
                continue
            n += 1
            if failure is None:
                try:
                    reply = ask(step.text, f"{self.id}#{n}", list(history))
                    if not reply.answer.strip():  # eval counts no empty reply as a turn: it would go unscored
                        raise RowFailure("malformed reply: an empty answer to a turn of a conversation", retry=False)
                except RowFailure as e:
                    failure = RowFailure(f"turn {n} of {self.turns} ({step.where}): {e}", e.retry, e.unreachable)
            if failure is not None:  # this turn and the ones after it: not answered, their fields kept on the user's
                messages.append({**step.message, **step.given})
                continue
            answered = {k: v for k, v in reply.fields().items() if k != "answer"}
            messages += [step.message, {"role": "assistant", "content": reply.answer, **answered, **step.given}]
            history += [{"role": "user", "content": step.text}, {"role": "assistant", "content": reply.answer}]
        row = {**self.record, "id": self.id, MESSAGES: messages}
        if failure is not None:
            row[RAG_ERROR_FIELD] = str(failure)
        return row, failure


def read_script(record: Mapping[str, Any], path: str, line: int | None) -> Script:
    """A conversation row checked (DatasetError naming the message and field of a bad one) as its Script."""
    raw, base = (record[MESSAGES], MESSAGES) if isinstance(record.get(MESSAGES), list) else (record[TURNS], TURNS)
    if MESSAGES in record and TURNS in record:
        raise DatasetError(path, line, TURNS, f"give either '{MESSAGES}' or '{TURNS}', not both")
    steps: list[Step] = []
    for i, m in enumerate(raw):
        where = f"{base}[{i}]"
        if base == TURNS:
            m = {"role": "user", "content": m} if isinstance(m, str) else (
                {"role": "user", **m} if isinstance(m, Mapping) and "role" not in m else m)
        if not isinstance(m, Mapping):
            raise DatasetError(path, line, where, f"expected a message object, got {type_name(m)}")
        role = m.get("role")
        if role not in ROLES or (base == TURNS and role != "user"):
            roles = "user" if base == TURNS else ", ".join(ROLES)
            got = "no role" if role is None else f"role {role!r}"
            raise DatasetError(path, line, f"{where}.role", f"expected one of {roles}; got {got}")
        given = _given(m, path, line, where)
        if role == "tool" or (role == "assistant" and any(s.asked for s in steps)):
            _attach(steps, given, path, line, where)  # a past run's reply or retrieval: replaced
            continue
        if "content" not in m:
            raise DatasetError(path, line, f"{where}.content", "missing required field")
        text = message_text(m["content"], path, line, f"{where}.content")
        if role == "user" and not text.strip():
            raise DatasetError(path, line, f"{where}.content", "expected the user's message, got empty text")
        if role != "user" and given:
            raise DatasetError(path, line, f"{where}.{next(iter(given))}", "only a turn (a user message or its "
                                                                              "reply) carries it")
        kept = {k: v for k, v in m.items() if k not in _GIVEN_NAMES}
        steps.append(Step(message=kept, text=text, given=given, where=where))
    users = [Message(role="user", content=s.text) for s in steps if s.asked]
    if not users:
        raise DatasetError(path, line, base, "no user message: nothing to ask")
    script_id = conversation_id(record.get("id"), users, path, line)
    rest = {k: v for k, v in record.items() if k not in (MESSAGES, TURNS, "id", RAG_ERROR_FIELD)}
    return Script(id=script_id, record=rest, steps=steps)


def _given(m: Mapping[str, Any], path: str, line: int | None, where: str) -> dict[str, Any]:
    """The turn's own fields a message carries (canonical names), checked; a near miss of one, or a field run-rag
    writes given on a user message, refused."""
    out: dict[str, Any] = {}
    for canonical in GIVEN:
        names = field_names(m, canonical) if canonical in FIELD_ALIASES else [n for n in (canonical,) if n in m]
        if not names or m[names[0]] is None:
            continue
        value, field = m[names[0]], f"{where}.{names[0]}"
        if canonical == "reference_context_ids":
            if not isinstance(value, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                      for x in value):
                raise DatasetError(path, line, field, "expected a list of ids (strings or integers)")
        elif not isinstance(value, str) or (canonical == STANDALONE and not value.strip()):
            raise DatasetError(path, line, field, f"expected a non-empty string, got {type_name(value)}")
        out[canonical] = value
    if m.get("role") == "user":
        for key in m:
            if key in _REPLY_NAMES:
                raise DatasetError(path, line, f"{where}.{key}", "written by run-rag on the turn's reply (what "
                                                                 "your pipeline gives), not given on the question")
            meant = near_miss(key, (*GIVEN, "contexts")) if isinstance(key, str) and key not in _GIVEN_NAMES else None
            if meant and key not in ("role", "content"):
                raise DatasetError(path, line, f"{where}.{key}", f"unknown field; did you mean '{meant}'?")
    return out


def _attach(steps: list[Step], given: dict[str, Any], path: str, line: int | None, where: str) -> None:
    """A past reply's turn fields onto the turn it answered (the last user message); a value that differs from the
    user message's own is refused."""
    turn = next((s for s in reversed(steps) if s.asked), None)
    for key, value in given.items():
        if turn is None:
            raise DatasetError(path, line, f"{where}.{key}", "comes before any user message: no turn to carry it")
        if turn.given.setdefault(key, value) != value:
            raise DatasetError(path, line, f"{where}.{key}", f"differs from the {key} given on {turn.where}")
