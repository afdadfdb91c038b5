"""A conversation's shapes as a sample carries them (docs/conversations.md).

A conversation is scored turn by turn: each assistant reply that answers a user message is one Sample, whose `turn`
(a Turn) says where it sits in its conversation and holds what came before it. The Sample's own fields are the turn's:
`question` the question the metrics ask about (the standalone question when the row gave one, else the user's message
as written, which the run rewrites into a standalone question when there is a conversation before it,
judge_calls/standalone.py), `answer` the reply, `contexts` what the assistant retrieved for it, `reference` the turn's.

A report keeps a TurnResult beside each turn's scores: the conversation's id, the turn's place, the user's message as
written and the question as scored (the standalone one, and whether the judge wrote it).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ROLES = ("user", "assistant", "system", "tool")
Role = Literal["user", "assistant", "system", "tool"]


class Message(BaseModel):
    """One message of a conversation, as the chat format logs it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str


class Turn(BaseModel):
    """A sample's place in its conversation: one assistant reply to a user message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation: str  # the conversation's id (its row's `id`, or named by its first user message)
    turn: int = Field(ge=1)  # 1-based, among the conversation's scored turns
    turns: int = Field(ge=1)  # how many scored turns the conversation has
    user_message: str  # the user's message this reply answers, as written
    # every message before user_message (system, user, assistant, tool), in order: what the rewrite, the turn's
    # faithfulness (the user's own words) and knowledge retention read
    history: list[Message] = Field(default_factory=list)
    standalone_given: bool = False  # the row gave the turn's standalone question (Sample.question): no rewrite

    @property
    def first(self) -> bool:
        return self.turn == 1

    @property
    def last(self) -> bool:
        return self.turn == self.turns

    def said_by(self, role: Role) -> list[str]:
        """What `role` said before this turn, in order (the user's: their messages before this turn's)."""
        return [m.content for m in self.history if m.role == role and m.content.strip()]

    @property
    def needs_rewrite(self) -> bool:
        """A question the run rewrites into a standalone one: not given as one, with an earlier user message (a
        greeting or a system message alone is no conversation to read it in)."""
        return not self.standalone_given and any(m.role == "user" for m in self.history)


class TurnResult(BaseModel):
    """A scored turn's place in its conversation, as its report keeps it (SampleResult.turn)."""

    model_config = ConfigDict(extra="forbid")

    conversation: str
    turn: int
    turns: int
    # the user's message as written; absent when the run keeps no sample text (--no-sample-text)
    user_message: str | None = None
    # the question the metrics were asked about: the standalone one (given, or written by the judge), or the user's
    # message for a first turn; absent when the run keeps no sample text
    question: str | None = None
    rewritten: bool = False  # the judge wrote `question` from the conversation (judge_calls/standalone.py)
