"""Judge work several metrics of one sample need, done once per sample (`sample_memo`): the answer's and the
reference's claims, and each side's claims checked against the other text. Used by factual correctness, answer
correctness and noise sensitivity, with the one claims prompt and the one verification prompt."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

from ..schema import Sample
from ..asking import check_items, claims_of
from .base import sample_memo

if TYPE_CHECKING:
    from ..judges import Judge

T = TypeVar("T")


def _once(sample: Sample, judge: "Judge", key: str, work: Callable[[list[str]], T], warnings: list[str]) -> T:
    """work(its own warnings) once per sample and judge; its warnings are added to `warnings` each time it is used."""
    memo = sample_memo(sample, judge)
    if key not in memo:
        own: list[str] = []
        memo[key] = (work(own), own)
    value, own = memo[key]
    warnings.extend(w for w in own if w not in warnings)
    return value


def answer_claims(sample: Sample, judge: "Judge", warnings: list[str]) -> list[str]:
    """The answer's claims (none for a blank answer, without asking)."""
    if not sample.answer.strip():
        return []
    return _once(sample, judge, "answer_claims",
                 lambda w: claims_of(judge, sample.answer, sample.question, w, what="answer"), warnings)


def reference_claims(sample: Sample, judge: "Judge", warnings: list[str]) -> list[str]:
    if not sample.reference:
        return []
    return _once(sample, judge, "reference_claims",
                 lambda w: claims_of(judge, sample.reference or "", sample.question, w, what="reference"), warnings)


def answer_claims_in_reference(sample: Sample, judge: "Judge", warnings: list[str]) -> list[bool]:
    """For each answer claim: does the reference support it? (correct claims; TP / FP)"""
    claims = answer_claims(sample, judge, warnings)
    return _once(sample, judge, "answer_claims_in_reference",
                 lambda w: check_items(judge, claims, [sample.reference or ""], w), warnings)


def reference_claims_in_answer(sample: Sample, judge: "Judge", warnings: list[str]) -> list[bool]:
    """For each reference claim: does the answer support it? (FN: those it does not)"""
    claims = reference_claims(sample, judge, warnings)
    return _once(sample, judge, "reference_claims_in_answer",
                 lambda w: check_items(judge, claims, [sample.answer], w), warnings)


def claims_in_context(sample: Sample, judge: "Judge", side: str, rank: int, warnings: list[str]) -> list[bool]:
    """For each claim of `side` ('answer' or 'reference'): does retrieved context number `rank` (1-based) support it?"""
    claims = answer_claims(sample, judge, warnings) if side == "answer" else reference_claims(sample, judge, warnings)
    context = sample.contexts[rank - 1]
    return _once(sample, judge, f"{side}_claims_in_context_{rank}",
                 lambda w: check_items(judge, claims, [context], w), warnings)
