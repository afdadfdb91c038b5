"""The shape of the metrics that judge a text's statements against the contexts (faithfulness: the answer's;
context recall: the reference's): their options, checked once here, and the prompts each setting asks."""
from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..asking.statements import DEFAULT_STATEMENTS, STATEMENT_MODES, statements_of
from ..asking.verdicts import DEFAULT_VERDICTS
from ..asking.ways import PLAIN, WAY_OPTIONS, Way
from ..core.errors import ConfigError
from ..data.metric_definition import verdict_renderer
from .base import WithVerdicts, check_choice

if TYPE_CHECKING:
    from ..scoring import Scoring

# The ways of asking that were measured and not adopted, taken out of the product (their measurements stay in
# docs/accuracy.md): option -> the value that was removed. Given, the option (or the value) is refused naming it.
REMOVED = {"evidence": "focused", "shots": 3, "phrasings": 2, "baseline": "content_free", "lead": "preceding",
           "statements": "hybrid"}


class StatementSupport(WithVerdicts):
    """A WithVerdicts metric whose items are the statements of one text (`statements` option: STATEMENT_MODES)."""

    options = {"verdicts": DEFAULT_VERDICTS, "statements": DEFAULT_STATEMENTS, **asdict(PLAIN)}
    verdict_prompts = ("verify_statement", "verify_statements")
    removed = REMOVED
    share: str  # what the score is the share of, e.g. "share of the reference answer's statements that ..."

    @property
    def definition(self) -> str:  # type: ignore[override]
        """The share, and how a statement counts by default."""
        return f"{self.share} (by default graded: the mean of the judge's P(yes) per statement)"

    @property
    def renderer(self) -> dict[str, Any]:  # type: ignore[override]
        """Each statement with its verdict tag (its flag, e.g. supported / not supported) and, graded, its P(yes)."""
        flag = self.item_fields[2]
        return verdict_renderer(*self.item_fields, flag, f"not {flag}")

    @property
    def way(self) -> Way:
        """How each statement's graded verdict is asked (asking/ways.py)."""
        return Way.of(self.options)

    @property
    def graded_family(self) -> str:  # type: ignore[override]
        """The family a calibration map knows this metric's graded scores by: its way of asking's (Way.family)."""
        return self.way.family

    @property
    def graded_prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        """The support questions its way of asking asks."""
        return self.way.families

    @property
    def prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        graded = self.options["verdicts"] == "probability"
        return (*self.other_prompts, *self.way.families) if graded else super().prompts

    @property
    def other_prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        return () if self.options["statements"] == "sentences" else ("extract_claims",)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check_options(options)
        choices = {"statements": STATEMENT_MODES, **WAY_OPTIONS}
        options = {**options, **{k: check_choice(self.name, k, options[k], values, self.removed.get(k))
                                 for k, values in choices.items()}}
        ways = [f"{k}={options[k]}" for k, v in asdict(PLAIN).items() if options[k] != v]
        if ways and options["verdicts"] == "json":
            raise ConfigError(f"{self.name}: {', '.join(ways)} shapes a graded verdict and does not apply to "
                              "verdicts=json (one JSON call for all statements); use verdicts=probability")
        return options

    def statements(self, ctx: "Scoring", text: str, what: str) -> list[str]:
        """The statements of `text` (the answer, the reference: `what`) by the metric's `statements` option."""
        return statements_of(ctx, text, ctx.sample.question, self.options["statements"], what=what)
