"""Ways of asking a graded support verdict (the options of faithfulness and context recall that shape each
statement's question; asking/support.py asks them): which contexts a statement is judged against (`evidence`),
whether the contradiction question is asked too (`question`), worked examples (`shots`), a second wording
(`phrasings`). Each option's values, with a line each, are defined here once; every default is the plain question.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..prompts import Prompt, contradict_statement, verify_statement, verify_statement_reworded

EVIDENCE = {
    "all": "each statement judged against all the retrieved contexts",
    "focused": "each statement judged against only the 3 context sentences most similar to it (the embedder's "
               "cosine), each with one neighbour sentence each side: shorter prompts (needs an embedder)",
}
QUESTIONS = {
    "supported": "the judge is asked whether the contexts support the statement; its P(yes) is the score",
    "both": "the judge is also asked whether the contexts contradict it; the score is (P(supported) + 1 - "
            "P(contradicted)) / 2 (two calls per statement)",
}
SHOTS = {
    0: "no worked example",
    3: "three hand-written worked examples (a supported paraphrase, an unsupported added detail, a contradiction; "
       "prompts/support_examples.py) before the contexts, part of the prefix a sample's calls share",
}
PHRASINGS = {
    1: "the support question in one wording",
    2: "the support question also in a second wording (verify_statement_reworded); its P(yes) is the mean of the two "
       "(two calls per statement)",
}

# The option name of each field of Way, with its values described (the first value is the default).
WAY_OPTIONS: dict[str, dict[Any, str]] = {"evidence": EVIDENCE, "question": QUESTIONS, "shots": SHOTS,
                                          "phrasings": PHRASINGS}


@dataclass(frozen=True)
class Way:
    """How each statement's graded verdict is asked; Way() is the default (one support question, all contexts)."""

    evidence: str = "all"
    question: str = "supported"
    shots: int = 0
    phrasings: int = 1

    @classmethod
    def of(cls, options: dict[str, Any]) -> "Way":
        """The way a metric's options choose (the option names are the field names)."""
        return cls(**{k: options[k] for k in cls.__dataclass_fields__ if k in options})

    @property
    def family(self) -> str:
        """The name a calibration map knows this way's scores by: the support prompt's family for the plain question,
        with the options that differ from the plain question's appended (e.g. "verify_statement:shots=3"), since
        another way of asking gives P(yes) on another scale."""
        changed = [f"{k}={getattr(self, k)}" for k in self.__dataclass_fields__ if getattr(self, k) != getattr(PLAIN, k)]
        return "verify_statement" + (":" + ",".join(changed) if changed else "")

    @property
    def families(self) -> tuple[str, ...]:
        """The prompt families asked (for the judge's window check)."""
        return tuple(p.name for p in self.prompts("", [], "en"))

    @property
    def wordings(self) -> tuple[Callable[..., Prompt], ...]:
        """The support question's wordings asked (phrasings=2: both)."""
        return (verify_statement, verify_statement_reworded)[:self.phrasings]

    def prompts(self, statement: str, contexts: list[str], lang: str) -> list[Prompt]:
        """The prompts asked for one statement against these contexts: the support question (phrasings=2: in its
        two wordings), then (question=both) the contradiction question."""
        asked = [ask(statement, contexts, lang=lang, shots=self.shots) for ask in self.wordings]
        if self.question == "both":
            asked.append(contradict_statement(statement, contexts, lang=lang, shots=self.shots))
        return asked

    def score(self, p: list[float]) -> tuple[float, dict[str, Any]]:
        """The statement's score from its prompts' P(yes) `p` (in the order of prompts(); asked by asking/support.py),
        and what the evidence keeps of them beside it: with phrasings=2, p_phrasings (each wording's P(yes)); with
        question=both, p_supported_only (the support question's P(yes), the mean of its wordings) and p_contradicted."""
        wordings = p[:self.phrasings]
        supported = sum(wordings) / len(wordings)
        kept: dict[str, Any] = {"p_phrasings": [round(x, 4) for x in wordings]} if self.phrasings > 1 else {}
        if self.question != "both":
            return supported, kept
        contradicted = p[self.phrasings]
        return ((supported + 1 - contradicted) / 2,
                {**kept, "p_supported_only": round(supported, 4), "p_contradicted": round(contradicted, 4)})


PLAIN = Way()
