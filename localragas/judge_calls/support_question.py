"""Ways of asking a graded support verdict (the `question` option of faithfulness and context recall, which shapes each
statement's question; judge_calls/support.py asks them): whether the contradiction question is asked too. Its values,
with a line each, are defined here once; the default is the plain question. The other ways that were measured and not
adopted left the product (metrics/statement_support.py REMOVED; their measurements: docs/accuracy.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..prompts import Prompt, contradict_statement, verify_statement

QUESTIONS = {
    "supported": "the judge is asked whether the contexts support the statement; its P(yes) is the score",
    "both": "the judge is also asked whether the contexts contradict it; the score is (P(supported) + 1 - "
            "P(contradicted)) / 2 (two calls per statement)",
}

# The option name of each field of Way, with its values described (the first value is the default).
WAY_OPTIONS: dict[str, dict[Any, str]] = {"question": QUESTIONS}


@dataclass(frozen=True)
class Way:
    """How each statement's graded verdict is asked; Way() is the default (the support question alone)."""

    question: str = "supported"

    @classmethod
    def of(cls, options: dict[str, Any]) -> "Way":
        """The way a metric's options choose (the option names are the field names)."""
        return cls(**{k: options[k] for k in cls.__dataclass_fields__ if k in options})

    @property
    def family(self) -> str:
        """The name a calibration map knows this way's scores by: the support prompt's family for the plain question,
        with the options that differ from the plain question's appended (e.g. "verify_statement:question=both"), since
        another way of asking gives P(yes) on another scale."""
        changed = [f"{k}={getattr(self, k)}" for k in self.__dataclass_fields__ if getattr(self, k) != getattr(PLAIN, k)]
        return "verify_statement" + (":" + ",".join(changed) if changed else "")

    @property
    def families(self) -> tuple[str, ...]:
        """The prompt families asked (for the judge's window check)."""
        return tuple(p.name for p in self.prompts("", [], "en"))

    def prompts(self, statement: str, contexts: list[str], lang: str) -> list[Prompt]:
        """The prompts asked for one statement against these contexts: the support question, then (question=both)
        the contradiction question."""
        asked = [verify_statement(statement, contexts, lang=lang)]
        if self.question == "both":
            asked.append(contradict_statement(statement, contexts, lang=lang))
        return asked

    def score(self, p: list[float]) -> tuple[float, dict[str, Any]]:
        """The statement's score from its prompts' P(yes) `p` (in the order of prompts()), and what the evidence keeps
        beside it: with question=both, p_supported_only (the support question's P(yes)) and p_contradicted."""
        if self.question != "both":
            return p[0], {}
        supported, contradicted = p
        return (supported + 1 - contradicted) / 2, {"p_supported_only": round(supported, 4),
                                                    "p_contradicted": round(contradicted, 4)}


PLAIN = Way()
