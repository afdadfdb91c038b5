"""The shape of the metrics that judge a text's statements against the contexts (faithfulness: the answer's;
context recall: the reference's): their options (StatementOptions), the prompts each setting asks, and their score."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import model_validator

from ..judge_calls.statements import DEFAULT_STATEMENTS, STATEMENT_MODES, statements_of
from ..judge_calls.support import QUESTIONS, SUPPORTED, support_family, support_prompts
from ..data.metric_definition import verdict_renderer
from ..data.schema import MetricResult
from .base import VerdictOptions, WithVerdicts
from .options import choice

if TYPE_CHECKING:
    from ..judge_calls.sample_context import Scoring
    from ..judge_calls.verdicts import ItemVerdicts


class StatementOptions(VerdictOptions):
    """Faithfulness's and context recall's options: the verdicts, what the statements are, and the question each
    graded verdict asks (judge_calls/support.py QUESTIONS)."""

    # ways of asking measured and not adopted (docs/accuracy.md): given, refused naming them (Options.parse)
    removed: ClassVar[dict[str, Any]] = {"evidence": "focused", "shots": 3, "phrasings": 2, "baseline": "content_free",
                                         "lead": "preceding", "statements": "hybrid"}
    statements: str = choice(STATEMENT_MODES, DEFAULT_STATEMENTS, "how the text is cut into the statements judged")
    question: str = choice(QUESTIONS, SUPPORTED, "the graded verdict's question")

    @model_validator(mode="after")
    def _graded_question(self) -> "StatementOptions":
        if self.question != SUPPORTED and self.verdicts == "json":
            raise ValueError(f"question={self.question} shapes a graded verdict and does not apply to verdicts=json "
                             "(one JSON call for all statements); use verdicts=probability")
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
    def graded_family(self) -> str:
        """The family a calibration map knows this metric's graded scores by: its question's (support_family)."""
        return support_family(self.options.question)

    @property
    def graded_prompts(self) -> tuple[str, ...]:
        """The prompt families its question asks."""
        return tuple(p.name for p in support_prompts("", [], "en", self.options.question))

    @property
    def prompts(self) -> tuple[str, ...]:
        return (*self.other_prompts, *self.graded_prompts) if self.graded else super().prompts

    @property
    def other_prompts(self) -> tuple[str, ...]:
        return () if self.options.statements == "sentences" else ("extract_claims",)

    def statements(self, ctx: "Scoring", text: str, what: str) -> list[str]:
        """The statements of `text` (the answer, the reference: `what`) by the metric's `statements` option."""
        return statements_of(ctx, text, ctx.sample.question, self.options.statements, what=what)

    def support_result(self, ctx: "Scoring", items: list[str], contexts: list[str], **evidence: Any) -> MetricResult:
        """The share of `items` the contexts support, by the metric's verdict strategy: the mean verdict (graded: the
        mean calibrated P(yes), or raw without a calibration; json: supported / total). Each item is listed under
        item_fields with its verdict (ItemVerdicts.item) and what its `question` noted for it."""
        notes: list[dict] = [{} for _ in items]
        return self.result_of(items, self.verdicts.support(ctx, items, contexts, self.options.question, notes), notes,
                              **evidence)

    def result_of(self, items: list[str], got: "ItemVerdicts", notes: list[dict], **evidence: Any) -> MetricResult:
        """support_result's MetricResult from the verdicts `got` on `items` and each item's notes."""
        plural, name, flag = self.item_fields
        rows = [{name: t, **got.item(i, flag), **note} for i, (t, note) in enumerate(zip(items, notes))]
        graded = {"calibrated": got.calibrated} if self.verdicts.graded else {}
        return MetricResult.of(sum(got.values) / len(got.values), verdicts=self.verdicts.name, **graded,
                               **{plural: rows}, **evidence)
