"""The Judge: a backend, one abstract method (`_complete`), the rest concrete; what a run sets is judges/judging.py's."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import JudgeError
from ..core.reply_schemas import Output, json_schema
from ..prompts import Prompt

if TYPE_CHECKING:
    from .yes_no import NextTokens


@dataclass
class Completion:
    """What a backend returns for one call."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV state was reused instead of evaluated
    truncated: bool = False  # stopped by max_tokens before the JSON closed


class Judge(ABC):
    """A local model that answers a Prompt: the backend, and nothing a run sets. A run asks it through its own judging
    context (judges/judging.py `Judging`: the cache, the prompt overrides, the calibration, the counters and the call
    log), so a judge is never changed by a run and may serve several runs, one after another or at once.

    A backend is one abstract method, `_complete`; `_next_tokens` when it can read next-token probabilities (graded
    verdicts, rubrics). `complete`, `yes_no` and `choices` are what a judging context calls: they may be called from
    several threads at once (`evaluate(concurrency=N)`); a backend whose `_complete` is not thread-safe sets
    `max_concurrency = 1`, and the runner then scores one sample at a time.
    """

    name: str = "judge"
    fingerprint: str = ""
    n_ctx: int | None = None  # context window in tokens (prompt + reply); None: unlimited, prompts are never split
    max_concurrency: int | None = None  # calls this backend can serve at once; None = no limit of its own
    # why the judge check (run/judge_check.py) is not run on this judge, e.g. a fake judge a test builds in code; None:
    # checked, unless its catalogue entry is exempt (ModelSpec.judge_check)
    judge_check_exempt: str | None = None

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in a prompt: the judge's tokenizer when it has one; here an estimate, 1 per 3 characters.

        Used by localragas.judge_calls to fit prompts into `n_ctx`, and only for prompts whose UTF-8 size exceeds it.
        """
        return -(-len(text) // 3)

    @abstractmethod
    def _complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """Run the model with decoding constrained to `schema`; raise JudgeError when no reply can be had."""

    def _next_tokens(self, prompt: Prompt) -> "NextTokens":
        """The judge's top next-token candidates after `prompt` (judges/yes_no.py), nothing generated. Backends that
        can read them override this."""
        raise JudgeError(f"the {self.name} judge cannot give token probabilities for graded verdicts or rubrics; "
                         "use --metric-option METRIC.verdicts=json")

    def _yes_no(self, prompt: Prompt) -> Completion:
        """A graded verdict: the prompt asks a yes/no question; the Completion's text is the YesNo JSON built from the
        judge's next-token probabilities (judges/yes_no.py)."""
        from .yes_no import completion, yes_no_reply  # noqa: PLC0415

        top = self._next_tokens(prompt)
        return completion(yes_no_reply(top.candidates, prompt.name), top.prompt_tokens, top.cached_tokens)

    def _choices(self, prompt: Prompt, options: tuple[str, ...]) -> Completion:
        """The Choices JSON of the judge's next-token probabilities over one-token `options` (judges/yes_no.py)."""
        from .yes_no import choice_reply, completion  # noqa: PLC0415

        top = self._next_tokens(prompt)
        return completion(choice_reply(top.candidates, options, prompt.name), top.prompt_tokens, top.cached_tokens)

    def complete(self, prompt: Prompt, output: type[Output]) -> Completion:
        """The model's reply to `prompt` (as asked: overrides applied), its decoding constrained to `output`'s JSON
        schema; not validated, not cached (Judging.generate does both)."""
        return self._complete(prompt, json_schema(output), output)

    def yes_no(self, prompt: Prompt) -> Completion:
        """A graded verdict's reply: the YesNo JSON of the next token's P(yes) after `prompt` (Judging.p_yes)."""
        return self._yes_no(prompt)

    def choices(self, prompt: Prompt, options: tuple[str, ...]) -> Completion:
        """A rubric's reply: the Choices JSON of the next token's probabilities over `options`
        (Judging.choice_probabilities)."""
        return self._choices(prompt, options)

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:  # noqa: B027 - a backend that holds nothing to release need not override it
        """Release the model (a backend that holds one overrides this)."""
