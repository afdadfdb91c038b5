"""The judge's context window: does a prompt fit with room for its reply, how many tokens a text takes; and the
refusal, before a run, of a window too small for a prompt's instructions and one item.

Token counts come from the judge (`Judge.count_tokens`: its tokenizer, or an estimate); prompts are sized as the run's
judging context asks them (judges/judging.py: with the user's instruction texts). No count is needed when a
prompt's UTF-8 size already fits: a token covers at least one byte, so a cached run never loads a model to count.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..judges.judging import judging_of
from ..prompts import (Prompt, check_question, contradict_statement, entities_in_contexts, extract_claims,
                       extract_entities, generate_questions, judge_chunk, judge_chunks, question_answerable,
                       rate_context_relevance, verify_statement, verify_statements)

if TYPE_CHECKING:
    from ..judges.base import Judge
    from ..judges.judging import Judging

OVERHEAD = 32  # chat-template tokens around the system and user messages (role markers, BOS)
TAG_TOKENS = 10  # the <context id="12"> … </context> wrapper of one item
VERDICT_TOKENS = 16  # one {"id": 12, "verdict": "yes"} in a reply
REPLY_BASE = 16  # {"verdicts": [ … ]}
YES_NO_REPLY = 4  # one word
QUESTIONS_REPLY = 256  # {"noncommittal": …, "questions": [3 questions of at most 200 characters]}
CLAIMS_REPLY_CAP = 1200
MIN_ITEM = 64  # the smallest piece of text worth judging on its own
CLAIM_PIECE_CHARS = 1500  # a longer text is split for claim extraction: one reply holds at most MAX_CLAIMS claims




def claims_reply(text: str) -> int:
    """Tokens to keep free for the claims of `text`: about its own size (claims restate it), capped."""
    return min(CLAIMS_REPLY_CAP, len(text.encode("utf-8")) // 3 + 48)


def verdicts_reply(n: int) -> int:
    return REPLY_BASE + VERDICT_TOKENS * n


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


# --- refusing a window too small -------------------------------------------------------------------------------------

# Per prompt family: the prompt with empty data, the data tokens of one item, the reply tokens for one item.
Smallest = tuple[Callable[[], Prompt], int, int]
_SMALLEST: dict[str, Smallest] = {
    "extract_claims": (lambda: extract_claims("", "?"), MIN_ITEM, CLAIMS_REPLY_CAP // 4),
    "verify_statements": (lambda: verify_statements([], []), 2 * (MIN_ITEM + TAG_TOKENS), verdicts_reply(1)),
    "verify_statement": (lambda: verify_statement("", []), 2 * (MIN_ITEM + TAG_TOKENS), YES_NO_REPLY),
    "contradict_statement": (lambda: contradict_statement("", []), 2 * (MIN_ITEM + TAG_TOKENS), YES_NO_REPLY),
    "extract_entities": (lambda: extract_entities(""), MIN_ITEM, CLAIMS_REPLY_CAP // 4),
    "entities_in_contexts": (lambda: entities_in_contexts([], []), 2 * MIN_ITEM + TAG_TOKENS, verdicts_reply(1)),
    "rate_context_relevance": (lambda: rate_context_relevance("?", []), 2 * MIN_ITEM + TAG_TOKENS, 16),
    "judge_chunks": (lambda: judge_chunks("?", "", "reference answer", []), 2 * MIN_ITEM + TAG_TOKENS,
                     verdicts_reply(1)),
    "judge_chunk": (lambda: judge_chunk("?", "", "reference answer", ""), 2 * MIN_ITEM + TAG_TOKENS, YES_NO_REPLY),
    "question_answerable": (lambda: question_answerable([""], "?"), 2 * MIN_ITEM + TAG_TOKENS, YES_NO_REPLY),
    "generate_questions": (lambda: generate_questions("", checked=True), MIN_ITEM, QUESTIONS_REPLY),
    "check_question": (lambda: check_question("", ""), 2 * MIN_ITEM + TAG_TOKENS, YES_NO_REPLY),
}


def fields_item(fields: int) -> int:
    """The data tokens of the smallest sample a custom metric showing `fields` sample fields is asked about."""
    return fields * (MIN_ITEM + TAG_TOKENS)


def _smallest(judging: "Judging", name: str, own: Mapping[str, Smallest] | None) -> tuple[Prompt, int, int] | None:
    """The family's prompt with empty data as the judge asks it (with the user's instruction text for the family, if
    overridden), one item's data tokens and its reply's; None for a family of unknown size (a plugin's)."""
    entry = (own or {}).get(name) or _SMALLEST.get(name)
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
