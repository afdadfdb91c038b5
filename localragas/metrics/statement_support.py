"""The shape of the metrics that judge a text's statements against the contexts (faithfulness: the answer's;
context recall: the reference's): their options (StatementOptions), and the prompts each setting asks."""
from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import model_validator

from ..judge_calls.statements import DEFAULT_STATEMENTS, STATEMENT_MODES, statements_of
from ..judge_calls.support_question import PLAIN, QUESTIONS, Way
from ..data.metric_definition import verdict_renderer
from .base import VerdictOptions, WithVerdicts
from .options import choice

if TYPE_CHECKING:
    from ..judge_calls.sample_context import Scoring

# The ways of asking that were measured and not adopted, taken out of the product (their measurements stay in
# docs/accuracy.md): option -> the value that was removed. Given, the option (or the value) is refused naming it.
REMOVED = {"evidence": "focused", "shots": 3, "phrasings": 2, "baseline": "content_free", "lead": "preceding",
           "statements": "hybrid"}


class StatementOptions(VerdictOptions):
    """Faithfulness's and context recall's options: the verdicts, what the statements are, and the way each graded
    verdict is asked (judge_calls/support_question.py Way: its fields are options of the same names)."""

    removed: ClassVar[dict[str, Any]] = REMOVED
    statements: str = choice(STATEMENT_MODES, DEFAULT_STATEMENTS, "how the text is cut into the statements judged")
    question: str = choice(QUESTIONS, PLAIN.question, "the graded verdict's question")

    @model_validator(mode="after")
    def _graded_ways(self) -> "StatementOptions":
        ways = [f"{k}={getattr(self, k)}" for k, v in asdict(PLAIN).items() if getattr(self, k) != v]
        if ways and self.verdicts == "json":
            raise ValueError(f"{', '.join(ways)} shapes a graded verdict and does not apply to verdicts=json (one JSON "
                             "call for all statements); use verdicts=probability")
        return self


class StatementSupport(WithVerdicts):
    """A WithVerdicts metric whose items are the statements of one text (`statements` option: STATEMENT_MODES)."""

    options: StatementOptions = StatementOptions()
    verdict_prompts = ("verify_statement", "verify_statements")
    share: str  # what the score is the share of, e.g. "share of the reference answer's statements that ..."

    def __init__(self) -> None:
        # the definition: the share, and how a statement counts by default; the renderer: each statement with its
        # verdict tag (its flag, e.g. supported / not supported) and, graded, its P(yes)
        self.definition = f"{self.share} (by default graded: the mean of the judge's P(yes) per statement)"
        flag = self.item_fields[2]
        self.renderer = verdict_renderer(*self.item_fields, flag, f"not {flag}")

    @property
    def way(self) -> Way:
        """How each statement's graded verdict is asked (judge_calls/support_question.py)."""
        return Way.of(dict(self.options))

    @property
    def graded_family(self) -> str:
        """The family a calibration map knows this metric's graded scores by: its way of asking's (Way.family)."""
        return self.way.family

    @property
    def graded_prompts(self) -> tuple[str, ...]:
        """The support questions its way of asking asks."""
        return self.way.families

    @property
    def prompts(self) -> tuple[str, ...]:
        return (*self.other_prompts, *self.way.families) if self.graded else super().prompts

    @property
    def other_prompts(self) -> tuple[str, ...]:
        return () if self.options.statements == "sentences" else ("extract_claims",)

    def statements(self, ctx: "Scoring", text: str, what: str) -> list[str]:
        """The statements of `text` (the answer, the reference: `what`) by the metric's `statements` option."""
        return statements_of(ctx, text, ctx.sample.question, self.options.statements, what=what)
