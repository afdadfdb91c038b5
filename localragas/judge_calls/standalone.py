"""The standalone question of a conversation's follow-up turn (docs/conversations.md, "The standalone question"): the
user's message rewritten by the judge into a question that stands alone given the conversation so far, one
constrained generation per turn (prompts/standalone.py, cached as every call), asked before the turn's metrics
(run/scoring.py), which then read it as the sample's question.

The conversation shown is the user's and the assistant's messages before the turn (system and tool messages are left
out: instructions to the assistant and retrieval results, not what was said). When it does not fit the judge's window
beside the message, the most recent messages that fit are shown (the most recent one cut when even it alone does not
fit), with a note. A message too long to rewrite (longer than a reply may be, or not fitting the window on its own) is
used as written, with a note.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.reply_schemas import MAX_STANDALONE_CHARS, StandaloneQuestion
from ..data.conversation_models import Message, Turn
from ..prompts import Prompt
from ..prompts.families import STANDALONE_REPLY_CAP
from ..prompts.standalone import FAMILY, standalone_question
from .text import truncate
from .window import MIN_ITEM, TAG_TOKENS, Window, fitted

if TYPE_CHECKING:
    from .sample_context import Asking

__all__ = ["FAMILY", "Standalone", "conversation_shown", "rewrite", "standalone_reply"]
SHOWN_ROLES = ("user", "assistant")  # what the rewrite reads of the conversation


@dataclass(frozen=True)
class Standalone:
    """A turn's question as its metrics read it: the judge's rewrite, or the message as written (with the reason in
    `notes`), and the notes on what was shown (a conversation cut to fit the window)."""

    question: str
    rewritten: bool  # the judge wrote it
    notes: list[str] = field(default_factory=list)


def standalone_reply(message: str) -> int:
    """Tokens to keep free for the rewrite of `message`: about twice its size (references spelled out), capped."""
    return min(STANDALONE_REPLY_CAP, len(message.encode("utf-8")) // 2 + 48)


def conversation_shown(turn: Turn) -> list[Message]:
    """The messages before the turn the rewrite is shown: the user's and the assistant's, with text, in order."""
    return [m for m in turn.history if m.role in SHOWN_ROLES and m.content.strip()]


def rewrite(ctx: "Asking", turn: Turn) -> Standalone:
    """The turn's user message rewritten to stand alone given the conversation before it (one call: ctx.ask, in the
    sample's language); the notes of what was cut are returned, not left in ctx.warnings. A JudgeError is the
    caller's: the turn cannot be scored on the message as written without saying so."""
    message, lang = turn.user_message, ctx.language.lang
    if len(message) > MAX_STANDALONE_CHARS:
        return Standalone(message, False, [f"the user's message ({len(message)} characters) is longer than a "
                                           f"standalone question may be ({MAX_STANDALONE_CHARS}): used as written"])
    history, reply = conversation_shown(turn), standalone_reply(message)

    def prompt(shown: list[Message]) -> Prompt:
        return standalone_question(shown, message, lang)

    outer, ctx.warnings = ctx.warnings, []
    try:
        shown = fitted(ctx, [(prompt(history), reply)], lambda: history, lambda w: _recent(w, history, prompt, reply))
        notes = ctx.warnings
    finally:
        ctx.warnings = outer
    if shown is None:
        return Standalone(message, False, notes)
    got = ctx.ask(prompt(shown), StandaloneQuestion)
    return Standalone(got.question.strip() or message, True, notes)


def _recent(w: Window, history: list[Message], prompt: Callable[[list[Message]], Prompt], reply: int) -> tuple[list[Message] | None, str]:
    """The most recent messages that fit beside the user's message and the reply (the most recent one's beginning
    when even it alone does not fit), and the note saying so; None when the message alone does not fit."""
    if not w.fits(prompt([]), reply):
        return None, (f"the user's message ({w.tokens(prompt([]).user)} tokens with the instructions) does not fit "
                      f"{w.named} for the standalone question: used as written")
    kept: list[Message] = []
    for m in reversed(history):
        if not w.fits(prompt([m, *kept]), reply):
            break
        kept.insert(0, m)
    cut = ""
    if not kept and history:
        limit = w.room(prompt([])) - reply - TAG_TOKENS
        if limit >= MIN_ITEM:
            last = history[-1]
            kept = [Message(role=last.role, content=truncate(last.content, limit, w.tokens))]
            cut = ", cut to its beginning"
    return kept, (f"the conversation did not fit {w.named} beside the user's message for the standalone question: "
                  f"its {len(kept)} most recent of {len(history)} earlier messages were shown{cut}")
