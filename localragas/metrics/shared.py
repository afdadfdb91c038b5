"""Judge work several metrics of one sample need, done once per sample (`Scoring.once`): the answer's and the
reference's claims, and each side's claims checked against the other text. Used by factual correctness, answer
correctness and noise sensitivity, with the one claims prompt and the one verification prompt."""
from __future__ import annotations

from ..judge_calls import claims_of
from ..judge_calls.verdicts import VERDICTS, YES
from ..judge_calls.sample_context import Scoring

JSON = VERDICTS["json"]  # the claim checks of factual correctness and noise sensitivity: yes/no verdicts, as ragas


def _supported(ctx: Scoring, claims: list[str], text: str) -> list[bool]:
    return [p >= YES for p in JSON.support(ctx, claims, [text]).values]


def answer_claims(ctx: Scoring) -> list[str]:
    """The answer's claims (none for a blank answer, without asking)."""
    s = ctx.sample
    if not s.answer.strip():
        return []
    return ctx.memoized("answer_claims", lambda: claims_of(ctx, s.answer, s.question, what="answer"))


def reference_claims(ctx: Scoring) -> list[str]:
    s = ctx.sample
    if not s.reference:
        return []
    return ctx.memoized("reference_claims", lambda: claims_of(ctx, s.reference or "", s.question, what="reference"))


def answer_claims_in_reference(ctx: Scoring) -> list[bool]:
    """For each answer claim: does the reference support it? (correct claims; TP / FP)"""
    claims = answer_claims(ctx)
    return ctx.memoized("answer_claims_in_reference", lambda: _supported(ctx, claims, ctx.sample.reference or ""))


def reference_claims_in_answer(ctx: Scoring) -> list[bool]:
    """For each reference claim: does the answer support it? (FN: those it does not)"""
    claims = reference_claims(ctx)
    return ctx.memoized("reference_claims_in_answer", lambda: _supported(ctx, claims, ctx.sample.answer))


def claims_in_context(ctx: Scoring, side: str, rank: int) -> list[bool]:
    """For each claim of `side` ('answer' or 'reference'): does retrieved context number `rank` (1-based) support it?"""
    claims = answer_claims(ctx) if side == "answer" else reference_claims(ctx)
    context = ctx.sample.contexts[rank - 1]
    return ctx.memoized(f"{side}_claims_in_context_{rank}", lambda: _supported(ctx, claims, context))
