"""The Judge: a backend, as inspect_ai's ModelAPI is: one abstract method for a completion constrained to a schema
(`complete`), one for the next token's log-probabilities (`next_tokens`), each returning data; what a run sets, and
what the data mean (a reply validated, P(yes) read), is judges/judging.py's."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from ..core.errors import JudgeError
from ..core.reply_schemas import Output
from ..prompts import Prompt


@dataclass
class Completion:
    """What a backend returns for a constrained completion."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV state was reused instead of evaluated
    truncated: bool = False  # stopped by max_tokens before the JSON closed


@dataclass
class NextTokens:
    """What a backend returns for a next-token read: its top candidates for the first token of the reply after the
    prompt, (token text, log-probability) pairs, best first (judges/yes_no.py TOP_TOKENS of them), nothing
    generated; and the call's token counts."""

    candidates: list[tuple[str, float]]
    prompt_tokens: int
    cached_tokens: int = 0
    completion_tokens: int = 1  # counted as one generated token (the fake: the words of its scripted reading)


class Judge(ABC):
    """A local model that answers a Prompt: the backend, and nothing a run sets. A run asks it through its own judging
    context (judges/judging.py `Judging`: the cache, the prompt overrides, the calibration, the counters and the call
    log, and what the backend's data mean: a reply validated, P(yes) read from the next tokens), so a judge is never
    changed by a run and may serve several runs, one after another or at once.

    A backend is one abstract method, `complete`; and `next_tokens` when it can read next-token probabilities (graded
    verdicts, rubrics). Both may be called from several threads at once (`evaluate(concurrency=N)`); a backend whose
    calls are not thread-safe sets `max_concurrency = 1`, and the runner then scores one sample at a time.
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
    def complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """The model's reply to `prompt` (as asked: overrides applied), its decoding constrained to `schema` (the
        JSON schema of `output`); not validated, not cached (Judging.generate does both). Raise JudgeError when no
        reply can be had."""

    def next_tokens(self, prompt: Prompt, words: tuple[str, ...]) -> NextTokens:
        """The judge's top next-token candidates after `prompt`, nothing generated (Judging.p_yes and
        Judging.choice_probabilities read them). `words`: the first words the caller reads (judges/yes_no.py
        YES_NO, or a rubric's levels); a backend returns its top candidates whatever they are. Backends that can
        read next-token probabilities override this."""
        raise JudgeError(f"the {self.name} judge cannot give token probabilities for graded verdicts or rubrics; "
                         "use --metric-option METRIC.verdicts=json")

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:  # noqa: B027 - a backend that holds nothing to release need not override it
        """Release the model (a backend that holds one overrides this)."""
