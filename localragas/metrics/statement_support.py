"""The shape of the metrics that judge a text's statements against the contexts (faithfulness: the answer's;
context recall: the reference's): their options, checked once here, and the prompts each setting asks."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..asking.statements import DEFAULT_STATEMENTS, STATEMENT_MODES, statements_of
from ..asking.verdicts import DEFAULT_VERDICTS
from .base import WithVerdicts, check_choice

if TYPE_CHECKING:
    from ..scoring import Scoring


class StatementSupport(WithVerdicts):
    """A WithVerdicts metric whose items are the statements of one text (`statements` option: STATEMENT_MODES)."""

    options = {"verdicts": DEFAULT_VERDICTS, "statements": DEFAULT_STATEMENTS}
    verdict_prompts = ("verify_statement", "verify_statements")

    @property
    def other_prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        return () if self.options["statements"] == "sentences" else ("extract_claims",)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check_options(options)
        return {**options, "statements": check_choice(self.name, "statements", options["statements"], STATEMENT_MODES)}

    def statements(self, ctx: "Scoring", text: str, what: str) -> list[str]:
        """The statements of `text` (the answer, the reference: `what`) by the metric's `statements` option."""
        return statements_of(ctx, text, ctx.sample.question, self.options["statements"], what=what)
