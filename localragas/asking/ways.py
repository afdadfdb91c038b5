"""Ways of asking a graded support verdict (the options of faithfulness and context recall that shape each
statement's question; asking/support.py asks them): which contexts a statement is judged against. Each option's
values, with a line each, are defined here once; the default of every one is today's question."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..prompts import Prompt, verify_statement

if TYPE_CHECKING:
    from ..scoring import Scoring

EVIDENCE = {
    "all": "each statement judged against all the retrieved contexts",
    "focused": "each statement judged against only the 3 context sentences most similar to it (the embedder's "
               "cosine), each with one neighbour sentence each side: shorter prompts (needs an embedder)",
}

# The option name of each field of Way, with its values described (the first value is the default).
WAY_OPTIONS: dict[str, dict[Any, str]] = {"evidence": EVIDENCE}


@dataclass(frozen=True)
class Way:
    """How each statement's graded verdict is asked; Way() is the default (one support question, all contexts)."""

    evidence: str = "all"

    @classmethod
    def of(cls, options: dict[str, Any]) -> "Way":
        """The way a metric's options choose (the option names are the field names)."""
        return cls(**{k: options[k] for k in cls.__dataclass_fields__ if k in options})

    def prompts(self, statement: str, contexts: list[str], lang: str) -> list[Prompt]:
        """The prompts asked for one statement against these contexts."""
        return [verify_statement(statement, contexts, lang=lang)]

    def score(self, ctx: "Scoring", prompts: list[Prompt]) -> tuple[float, dict[str, Any]]:
        """The statement's score from its prompts' P(yes), and what the evidence keeps of them beside it."""
        return ctx.p_yes(prompts[0]), {}


PLAIN = Way()
