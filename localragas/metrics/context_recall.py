from __future__ import annotations

from typing import Any

from ..asking import claims_of
from ..errors import ConfigError
from ..schema import MetricResult
from ..sentences import sentences
from ..scoring import Scoring
from ..asking.verdicts import DEFAULT_VERDICTS, SUPPORT_FAMILY
from .base import WithVerdicts, register, support_result

# How the reference is cut into the statements attributed to the contexts.
STATEMENT_MODES = {
    "claims": "atomic claims extracted by the judge (one extra call per sample)",
    "sentences": "the reference's sentences, split locally as in the RAGAS paper (no extra call)",
}
DEFAULT_STATEMENTS = "claims"


class ContextRecall(WithVerdicts):
    name = "context_recall"
    needs = ("reference", "contexts")
    definition = ("share of the reference answer's statements that can be attributed to the retrieved contexts (by "
                  "default graded: the mean of the judge's P(yes) per statement)")
    problem = "retrieval misses information the answer needs"
    options = {"verdicts": DEFAULT_VERDICTS, "statements": DEFAULT_STATEMENTS}
    verdict_prompts = (SUPPORT_FAMILY, "verify_statements")
    item_fields = ("statements", "statement", "attributed")
    thresholds = {"probability": 0.50, "calibrated": 0.65, "json": 0.70}

    @property
    def other_prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("extract_claims",) if self.options["statements"] == "claims" else ()

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check_options(options)
        if options["statements"] not in STATEMENT_MODES:
            valid = "; ".join(f"{k}: {v}" for k, v in STATEMENT_MODES.items())
            raise ConfigError(f"{self.name}: statements must be one of {', '.join(STATEMENT_MODES)}, got "
                              f"{options['statements']!r} ({valid})")
        return options

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        if self.options["statements"] == "sentences":
            statements = sentences(sample.reference)
        else:
            statements = claims_of(ctx, sample.reference, sample.question, what="reference")
        if not statements:
            return MetricResult.unscored_because("no_claims", note="the reference holds no factual statement")
        note = {} if sample.contexts else {"note": "no contexts: no statement can be attributed"}
        return support_result(ctx, self, statements, sample.contexts, **note)


register(ContextRecall())
