"""Ways of asking a graded support verdict (the options of faithfulness and context recall that shape each
statement's question; asking/support.py asks them): which contexts a statement is judged against (`evidence`),
whether the contradiction question is asked too (`question`), worked examples (`shots`), a second wording
(`phrasings`), a content-free baseline divided out (`baseline`), what a statement is read with (`lead`). Each option's
values, with a line each, are defined here once; every default is the plain question.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..calibration_map import sigmoid
from ..prompts import Prompt, contradict_statement, verify_statement, verify_statement_reworded
from ..prompts.verdicts import LEAD_NOTE, NULL_STATEMENTS

if TYPE_CHECKING:
    from ..scoring import Scoring

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

LEAD_SENTENCES = 3  # lead=preceding: the sentences before a statement shown with it, the nearest ones

BASELINES = {
    "none": "each statement's support P(yes) as the judge gives it",
    "content_free": "the support question also asked about content-free statements "
                    f"({', '.join(map(repr, NULL_STATEMENTS['en']))}; prompts/verdicts.py NULL_STATEMENTS) against "
                    "the same contexts, once per sample and contexts; each statement's support P(yes) p becomes "
                    "sigmoid(logit(p) - logit(p0)), p0 their mean P(yes) (contextual calibration: two calls more per "
                    "sample, four with phrasings=2)",
}
LEADS = {
    "none": "each statement judged alone",
    "preceding": "each statement shown after what its text answers (the sample's question) and the sentences before "
                 f"it in its text (at most {LEAD_SENTENCES}), to be read with them and judged alone "
                 "(prompts/verdicts.py LEAD_NOTE): a short answer (\"No.\") or a pronoun reads as meant",
}

# The option name of each field of Way, with its values described (the first value is the default).
WAY_OPTIONS: dict[str, dict[Any, str]] = {"evidence": EVIDENCE, "question": QUESTIONS, "shots": SHOTS,
                                          "phrasings": PHRASINGS, "baseline": BASELINES, "lead": LEADS}
CLIP = 1e-4  # P(yes) and the baseline are clipped to [CLIP, 1 - CLIP] before the logit (baseline=content_free)


@dataclass(frozen=True)
class Way:
    """How each statement's graded verdict is asked; Way() is the default (one support question, all contexts)."""

    evidence: str = "all"
    question: str = "supported"
    shots: int = 0
    phrasings: int = 1
    baseline: str = "none"
    lead: str = "none"

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
    def texts(self) -> dict[str, dict[str, Any]]:
        """The texts its prompts hold outside the prompt families' templates, by the name a calibration records their
        hash under (StatementSupport.prompt_hashes): null_statements (NULL_STATEMENTS) with a baseline, lead_note
        (LEAD_NOTE) with lead=preceding; none for the plain question."""
        used = {"null_statements": (self.baseline != "none", NULL_STATEMENTS),
                "lead_note": (self.lead != "none", LEAD_NOTE)}
        return {name: text for name, (on, text) in used.items() if on}

    @property
    def wordings(self) -> tuple[Callable[..., Prompt], ...]:
        """The support question's wordings asked (phrasings=2: both)."""
        return (verify_statement, verify_statement_reworded)[:self.phrasings]

    def prompts(self, statement: str, contexts: list[str], lang: str,
                lead: tuple[str, str] = ("", "")) -> list[Prompt]:
        """The prompts asked for one statement against these contexts: the support question (phrasings=2: in its
        two wordings), then (question=both) the contradiction question. `lead`: (question, text before the
        statement), shown with it when lead=preceding (statements.lead_of)."""
        lead = lead if self.lead == "preceding" else ("", "")
        asked = [ask(statement, contexts, lang=lang, shots=self.shots, lead=lead) for ask in self.wordings]
        if self.question == "both":
            asked.append(contradict_statement(statement, contexts, lang=lang, shots=self.shots, lead=lead))
        return asked

    def null_prompts(self, contexts: list[str], lang: str) -> list[Prompt]:
        """The support question (in each of its wordings) about each content-free statement against these contexts,
        laid out as a statement's (the same shared prefix: asked after the statements, it reuses their KV state);
        none without a baseline. Not the contradiction question: the baseline is the support question's."""
        if self.baseline == "none":
            return []
        return [ask(s, contexts, lang=lang, shots=self.shots) for s in NULL_STATEMENTS[lang] for ask in self.wordings]

    def null_p(self, ctx: "Scoring", contexts: list[str], lang: str) -> float | None:
        """p0, the mean P(yes) of null_prompts (with phrasings=2 the mean over the wordings of the nulls' mean, as a
        statement's support P(yes) is the mean of its wordings'), asked once per sample for the same prompts (shared
        by the metric's statements, and by faithfulness and context recall against the same contexts); None without
        a baseline."""
        prompts = self.null_prompts(contexts, lang)
        if not prompts:
            return None
        digest = hashlib.sha256("\0".join(f"{p.name}\0{p.system}\0{p.user}" for p in prompts).encode()).hexdigest()
        return ctx.once(f"null_p:{digest}", lambda: sum(ctx.p_yes(p) for p in prompts) / len(prompts))

    def score(self, p: list[float], p0: float | None = None) -> tuple[float, dict[str, Any]]:
        """The statement's score from its prompts' P(yes) `p` (in the order of prompts()) and the baseline p0
        (null_p; None: no baseline), and what the evidence keeps beside it: with phrasings=2, p_phrasings (each
        wording's P(yes)); with a baseline, p_unadjusted (the support question's P(yes), the mean of its wordings)
        and p_null (p0), the support P(yes) then adjusted (adjusted()); with question=both, p_supported_only (the
        support question's P(yes), adjusted when there is a baseline) and p_contradicted."""
        wordings = p[:self.phrasings]
        supported = sum(wordings) / len(wordings)
        kept: dict[str, Any] = {"p_phrasings": [round(x, 4) for x in wordings]} if self.phrasings > 1 else {}
        if p0 is not None:
            kept.update(p_unadjusted=round(supported, 4), p_null=round(p0, 4))
            supported = adjusted(supported, p0)
        if self.question != "both":
            return supported, kept
        contradicted = p[self.phrasings]
        return ((supported + 1 - contradicted) / 2,
                {**kept, "p_supported_only": round(supported, 4), "p_contradicted": round(contradicted, 4)})


def adjusted(p: float, p0: float) -> float:
    """P(yes) `p` with the judge's leaning on these contexts, P(yes) `p0` of content-free statements, divided out:
    sigmoid(logit(p) - logit(p0)), both clipped to [CLIP, 1 - CLIP]. A statement the judge favours no more than "N/A"
    gets 0.5; the ranking of the statements against the same contexts is unchanged."""
    return sigmoid(_logit(p) - _logit(p0))


def _logit(p: float) -> float:
    p = min(max(p, CLIP), 1.0 - CLIP)
    return math.log(p / (1.0 - p))


PLAIN = Way()
