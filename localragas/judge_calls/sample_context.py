"""The scoring context: one sample scored with one run's judging context (judges/judging.py: the judge, the run's
cache, prompt overrides and calibration) and one embedder, passed to every metric (`Metric.score(ctx)`) and through it
to every judge call (localragas.judge_calls).

It carries what used to be hidden state: the sample's languages (localragas.data.language.Scope), the memo of judge work
several metrics of the sample share (the answer's and the reference's claims and their checks: done once), the
warnings of the metric being scored (each split or truncation that shaped its result) and the log of the judge calls
made for the sample. One context is used by one thread; samples scored in parallel each have their own.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..judges.judging import CallLog, Judging, judging_of
from ..data.language import Scope, scope_of

if TYPE_CHECKING:
    from ..judges.embeddings import Embedder
    from ..judges.base import Judge
    from ..core.reply_schemas import Output
    from ..prompts import Prompt
    from ..data.schema import Sample

T = TypeVar("T")
O = TypeVar("O", bound="Output")  # noqa: E741 - the reply schema ask() returns


class Asking:
    """What a call of the judge-call layer (localragas.judge_calls) needs: the run's judging context, the prompts'
    language, the warnings of the work in hand and the log of the calls. A Scoring (one sample's) is one; `localragas
    generate` asks through one per generated item (localragas.judge_calls.generation). A judge given alone is asked
    through a judging context of its own with nothing set (judging_of)."""

    def __init__(self, judging: "Judging | Judge", language: Scope):
        self.judging = judging_of(judging)  # its calibration is the one the run applies (the one in effect)
        self.language = language
        self.warnings: list[str] = []
        self.log = CallLog()

    def ask(self, prompt: "Prompt", output: "type[O]") -> "O":
        """The judge's reply to `prompt`, recorded in this sample's call log."""
        return self.judging.generate(prompt, output, log=self.log)

    def p_yes(self, prompt: "Prompt") -> float:
        """The judge's P(yes) for the yes/no question `prompt` (a graded verdict), recorded in the sample's call log."""
        return self.judging.p_yes(prompt, log=self.log)

    def choices(self, prompt: "Prompt", options: "Sequence[str]") -> dict[str, float]:
        """The judge's probability of each one-token option (a rubric's levels), recorded in the sample's call log."""
        return self.judging.choice_probabilities(prompt, options, log=self.log)

    def warn(self, message: str) -> None:
        """Note a split or truncation in the evidence of the metric being scored."""
        self.warnings.append(message)


class Scoring(Asking):
    """One (sample, judging, embedder): its languages, its shared work, the current metric's warnings, its call log."""

    def __init__(self, sample: "Sample", judging: "Judging | Judge", embedder: "Embedder | None" = None):
        super().__init__(judging, scope_of(sample))
        self.sample = sample
        self.embedder = embedder
        self.memo: dict[str, tuple[Any, list[str]]] = {}

    # --- work shared by the metrics of the sample ---------------------------------------------------------------

    def memoized(self, key: str, work: Callable[[], T]) -> T:
        """work() the first time `key` is asked for this sample, its value kept; the warnings it noted are noted again
        (once) for every metric that uses it."""
        if key not in self.memo:
            outer, self.warnings = self.warnings, []
            try:
                value = work()
            finally:
                own, self.warnings = self.warnings, outer
            self.memo[key] = (value, own)
        value, own = self.memo[key]
        self.warnings.extend(w for w in own if w not in self.warnings)
        return value
