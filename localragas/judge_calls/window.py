"""The judge's context window: does a prompt fit with room for its reply, how many tokens a text takes; the one rule
every judge call is fitted by (`fitted`: as it is when it fits, else split, grouped or cut, and a note in the
evidence); and the refusal, before a run, of a window too small for a prompt's instructions and one item.

Token counts come from the judge (`Judge.count_tokens`: its tokenizer, or an estimate); prompts are sized as the run's
judging context asks them (judges/judging.py: with the user's instruction texts). No count is needed when a
prompt's UTF-8 size already fits: a token covers at least one byte, so a cached run never loads a model to count.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..core.errors import ConfigError
from ..judges.judging import judging_of
from ..prompts import Prompt
from ..prompts.families import (CLAIMS_REPLY_CAP, FAMILIES, MIN_ITEM, QUESTIONS_REPLY, RATING_REPLY, REPLY_BASE,
                                TAG_TOKENS, VERDICT_TOKENS, YES_NO_REPLY, Smallest, verdicts_reply)

if TYPE_CHECKING:
    from ..judges.base import Judge
    from ..judges.judging import Judging
    from .sample_context import Asking

__all__ = ["CLAIMS_REPLY_CAP", "MIN_ITEM", "QUESTIONS_REPLY", "RATING_REPLY", "REPLY_BASE", "TAG_TOKENS",
           "VERDICT_TOKENS", "YES_NO_REPLY", "Smallest", "Window", "check_window", "claims_reply", "fields_item",
           "fitted", "needed_window", "verdicts_reply"]
T = TypeVar("T")

OVERHEAD = 32  # chat-template tokens around the system and user messages (role markers, BOS)
CLAIM_PIECE_CHARS = 1500  # a longer text is split for claim extraction: one reply holds at most MAX_CLAIMS claims


def claims_reply(text: str) -> int:
    """Tokens to keep free for the claims of `text`: about its own size (claims restate it), capped."""
    return min(CLAIMS_REPLY_CAP, len(text.encode("utf-8")) // 3 + 48)


class Window:
    """The judge's context window: does a prompt fit with room for its reply; how many tokens a text takes."""

    def __init__(self, judging: "Judging | Judge"):
        self.judging = judging_of(judging)
        self.n_ctx: int | None = self.judging.n_ctx

    @property
    def limited(self) -> bool:
        return self.n_ctx is not None

    def tokens(self, text: str) -> int:
        return self.judging.count_tokens(text) if text else 0

    def prompt_tokens(self, prompt: Prompt) -> int:
        """Tokens of the prompt as the judge asks it: with the user's instruction text for its family, if any."""
        return self.asked_tokens(self.judging.with_overrides(prompt))

    def asked_tokens(self, prompt: Prompt) -> int:
        """Tokens of a prompt already as asked (its overrides applied)."""
        return self.tokens(prompt.system) + self.tokens(prompt.user) + OVERHEAD

    def fits(self, prompt: Prompt, reply: int) -> bool:
        if self.n_ctx is None:
            return True
        prompt = self.judging.with_overrides(prompt)
        limit = self.n_ctx - reply
        if len(prompt.system.encode("utf-8")) + len(prompt.user.encode("utf-8")) + OVERHEAD <= limit:
            return True  # an upper bound of the token count already fits: no tokenizer needed
        return self.prompt_tokens(prompt) <= limit

    def room(self, prompt: Prompt) -> int:
        """Tokens of the window left after this prompt (its data placeholders empty)."""
        assert self.n_ctx is not None
        return self.n_ctx - self.prompt_tokens(prompt)

    @property
    def named(self) -> str:
        """The window as a note in the evidence names it."""
        return f"the judge's context window (n_ctx={self.n_ctx})"


def fitted(ctx: "Asking", asked: Iterable[tuple[Prompt, int]], whole: Callable[[], T],
           split: Callable[[Window], tuple[T, str | None]]) -> T:
    """Does the prompt fit the window, else split and note it: whole() when every prompt of `asked` (each with the
    tokens its reply needs; evaluated lazily, the first that does not fit ends the check) fits the judge's context
    window, as it is; else split(window), which asks (or returns) its pieces, groups or cut texts and gives the note
    that says what it did (None: nothing to note), warned into the metric's evidence."""
    w = Window(ctx.judging)
    if all(w.fits(prompt, reply) for prompt, reply in asked):
        return whole()
    got, note = split(w)
    if note:
        ctx.warn(note)
    return got


# --- refusing a window too small -------------------------------------------------------------------------------------

def fields_item(fields: int) -> int:
    """The data tokens of the smallest sample a custom metric showing `fields` sample fields is asked about."""
    return fields * (MIN_ITEM + TAG_TOKENS)


def _smallest(judging: "Judging", name: str, own: Mapping[str, Smallest] | None) -> tuple[Prompt, int, int] | None:
    """The family's prompt with empty data as the judge asks it (with the user's instruction text for the family, if
    overridden), one item's data tokens and its reply's; None for a family of unknown size (a plugin's)."""
    family = FAMILIES.get(name)
    entry = (own or {}).get(name) or (family.smallest if family else None)
    if entry is None:
        return None
    make, item, reply = entry
    return judging.with_overrides(make()), item, reply


def needed_window(judging: "Judging | Judge", prompt_name: str, own: Mapping[str, Smallest] | None = None) -> int:
    """Tokens a prompt family needs at least: its instructions (as the run asks them), one item, and the reply for
    one item. own: the smallest prompts of custom metrics' families (Metric.window_prompts)."""
    w = Window(judging)
    got = _smallest(w.judging, prompt_name, own)
    if got is None:
        raise KeyError(prompt_name)
    prompt, item, reply = got
    return w.asked_tokens(prompt) + item + reply


def _what(judging: "Judging", name: str, own: Mapping[str, Smallest] | None) -> tuple[str, str]:
    """How an error names the prompt (its family, and where its text came from when it is the user's), and what to
    do about it."""
    sources = judging.prompts.sources if judging.prompts else {}
    if name in sources:
        return f"the {name} prompt (its instruction text from {sources[name]})", "shorten that text, or raise it"
    if name in (own or {}):
        return f"the {name} prompt (the custom metric's own question)", "shorten the question, or raise it"
    return f"the {name} prompt", "raise it"


def check_window(judging: "Judging | Judge", prompt_names: Sequence[str],
                 own: Mapping[str, Smallest] | None = None) -> None:
    """Refuse a judge whose context window cannot hold a prompt's instructions and one item (ConfigError), sizing what
    is really asked: an overridden family's instruction text (Judging.prompts), a custom metric's own prompt (`own`:
    family -> its smallest prompt, Metric.window_prompts)."""
    judging = Window(judging).judging
    n_ctx = judging.n_ctx
    if n_ctx is None:
        return
    for name in dict.fromkeys(prompt_names):
        got = _smallest(judging, name, own)
        if got is None:  # a plugin metric's prompt: its size is not known here
            continue
        p, item, reply = got
        if len(p.system.encode("utf-8")) + len(p.user.encode("utf-8")) + OVERHEAD + item + reply <= n_ctx:
            continue  # fits by an upper bound: no tokenizer needed
        needed = needed_window(judging, name, own)
        if needed > n_ctx:
            what, advice = _what(judging, name, own)
            raise ConfigError(
                f"the judge's context window is too small: n_ctx={n_ctx} tokens, but {what} needs at least {needed} "
                f"(its instructions, one item and the reply); {advice}, e.g. "
                f"--judge-option n_ctx={max(2048, 1 << (needed - 1).bit_length())}"
            )
