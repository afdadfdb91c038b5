"""The judge calls of a conversation's metrics (metrics/knowledge_retention.py, metrics/conversation_completeness.py):
the conversation as the judge is shown it (its user and assistant messages, numbered), fitted to the judge's window
by keeping the most recent messages (the cut noted in the evidence), and the graded verdicts asked about it, with the
judge's calibration for the family applied when it has one (judge_calls.verdicts.graded)."""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..data.conversation_models import Message, Turn
from ..prompts import Prompt
from ..prompts.conversation import knowledge_retained, request_addressed
from .text import truncate
from .verdicts import ItemVerdicts, graded
from .window import MIN_ITEM, TAG_TOKENS, YES_NO_REPLY, Window, fitted

if TYPE_CHECKING:
    from .sample_context import Asking

RETAINED_FAMILY = "knowledge_retained"
ADDRESSED_FAMILY = "request_addressed"


def conversation_of(turn: Turn, reply: str | None = None) -> list[Message]:
    """The conversation's user and assistant messages with text before the turn, then the turn's user message, then
    `reply` (its assistant's reply) when given: what the judge is shown (system and tool messages are neither what the
    user said nor a reply)."""
    said = [m for m in turn.history if m.role in ("user", "assistant") and m.content.strip()]
    said.append(Message(role="user", content=turn.user_message))
    if reply is not None:
        said.append(Message(role="assistant", content=reply))
    return said


def recent(ctx: "Asking", messages: list[Message], keep: int,
           make: Callable[[list[Message], int], Prompt]) -> tuple[list[Message], int]:
    """The most recent of the messages for which make(shown, first) fits the judge's window with a one-word reply
    (`first`: the number of the first one shown), and that number: all of them when they fit; else the oldest left
    out, at least the last `keep` kept, and those cut to an even share of the window when even they do not fit. What
    was left out or cut is noted in the metric's evidence."""
    def split(w: Window) -> tuple[tuple[list[Message], int], str]:
        last = max(0, len(messages) - keep)
        # the first start whose prompt fits: fewer messages never need more room (a binary search, few token counts)
        start = bisect_left(range(last), True, key=lambda s: w.fits(make(messages[s:], s + 1), YES_NO_REPLY))
        shown = messages[start:]
        note = (f"the conversation did not fit {w.named}: its first {start} message(s) were left out, the most "
                f"recent {len(shown)} shown")
        if not w.fits(make(shown, start + 1), YES_NO_REPLY):
            blank = [m.model_copy(update={"content": ""}) for m in shown]
            share = max(MIN_ITEM, (w.room(make(blank, start + 1)) - YES_NO_REPLY) // len(shown) - TAG_TOKENS)
            shown = [m.model_copy(update={"content": truncate(m.content, share, w.tokens)}) for m in shown]
            note += f", each cut to about {share} tokens"
        return (shown, start + 1), note

    return fitted(ctx, [(make(messages, 1), YES_NO_REPLY)], lambda: (messages, 1), split)


def retention(ctx: "Asking", conversation: Sequence[Message]) -> tuple[ItemVerdicts, list[Message], int]:
    """P(yes) that the conversation's last message (the assistant's reply) stays consistent with what the user said
    before it (conversation_of: it holds an earlier user message), raw and calibrated; the earlier messages shown
    and the number of the first. At least the last earlier user message is kept in a small window."""
    lang = ctx.language.lang
    messages = list(conversation)
    last_user = max(i for i, m in enumerate(messages[:-2]) if m.role == "user")

    def make(shown: list[Message], first: int) -> Prompt:
        return knowledge_retained(shown[:-2], shown[-2].content, shown[-1].content, lang, first)

    shown, first = recent(ctx, messages, len(messages) - last_user, make)
    return graded(ctx, RETAINED_FAMILY, [ctx.p_yes(make(shown, first))]), shown[:-2], first


def requests_addressed(ctx: "Asking", conversation: Sequence[Message]
                       ) -> tuple[ItemVerdicts, list[tuple[int, str]]]:
    """For each user message of the conversation shown (conversation_of, ending with the last reply), P(yes) that
    the assistant's replies addressed it: one call each on the conversation's shared prefix, raw and calibrated; and
    the requests judged, (the number of its message, its text). A request left out with its message (the window)
    is not judged."""
    lang = ctx.language.lang
    messages = list(conversation)

    def make(shown: list[Message], first: int) -> Prompt:  # sized with its longest request
        longest = max((m.content for m in shown if m.role == "user"), key=len, default="")
        return request_addressed(shown, longest, first, lang, first)

    shown, first = recent(ctx, messages, 2, make)
    requests = [(first + i, m.content) for i, m in enumerate(shown) if m.role == "user" and m.content.strip()]
    raw = [ctx.p_yes(request_addressed(shown, text, n, lang, first)) for n, text in requests]
    return graded(ctx, ADDRESSED_FAMILY, raw), requests
