"""Retrieved chunks judged for a target (context precision: is each chunk useful for the reference, the answer or
the question? and, with questions=both, does it state the answer?) and rated as a whole for a question (context
relevance), fitted to the judge's window."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.reply_schemas import Rating, verdicts_for
from ..prompts import Prompt, judge_chunk, judge_chunks, question_answerable, rate_context_relevance
from ..prompts.rating import VARIANTS
from .text import context_pieces, number_list, pack, split_text, truncate
from .window import (MIN_ITEM, RATING_REPLY, REPLY_BASE, TAG_TOKENS, VERDICT_TOKENS, YES_NO_REPLY, Window, fitted,
                     verdicts_reply)

if TYPE_CHECKING:
    from .sample_context import Scoring

def _fit_question_target(ctx: "Scoring", w: Window, question: str, target: str, kind: str, bare_prompt: Prompt,
                         reply: int) -> tuple[str, str]:
    """The question and target, truncated when together they take more than half the window (the other half is
    for the chunks)."""
    assert w.n_ctx is not None
    bare = w.room(bare_prompt) - reply
    if w.tokens(question) + w.tokens(target) > bare // 2:
        q_limit = max(MIN_ITEM, bare // 8)
        if w.tokens(question) > q_limit:
            question = truncate(question, q_limit, w.tokens)
            ctx.warn(f"the question was truncated to fit {w.named}")
        t_limit = max(MIN_ITEM, bare // 2 - w.tokens(question))
        if w.tokens(target) > t_limit:
            target = truncate(target, t_limit, w.tokens)
            ctx.warn(f"the {kind} was truncated to fit {w.named} for judging chunk relevance")
    return question, target


CHUNK_QUESTIONS = {
    "useful": "each chunk asked once: is it useful for the reference, the answer or the question (judge_chunk)",
    "both": "each chunk also asked whether it states the answer to the question (question_answerable, as "
            "`localragas generate` checks its items); the chunk's P(yes) is the mean of the two (two calls per chunk)",
}


def relevance_family(questions: str) -> str:
    """The name a calibration map knows the chunk scores of `questions` (CHUNK_QUESTIONS) by: judge_chunk for the one
    question; the mean of two is on another scale ("judge_chunk:questions=both"), as support.py support_family
    names the support question's `question=both`."""
    return "judge_chunk" if questions == "useful" else f"judge_chunk:questions={questions}"


def chunk_probabilities(ctx: "Scoring", question: str, target: str, kind: str, contexts: list[str]) -> list[float]:
    """For each chunk, P(yes) that it is useful for the target (see chunk_flags): one graded call per chunk."""
    lang = ctx.language.lang
    return _per_chunk(ctx, question, target, kind, contexts,
                      lambda q, t, c: judge_chunk(q, t, kind, c, lang=lang))


def answerable_probabilities(ctx: "Scoring", question: str, contexts: list[str]) -> list[float]:
    """For each chunk, P(yes) that it, shown alone, states the answer to the question: one graded call per chunk
    (the prompt `localragas generate` checks an item's answerability with)."""
    lang = ctx.language.lang
    return _per_chunk(ctx, question, "", "question", contexts,
                      lambda q, t, c: question_answerable([c], q, lang))


def _per_chunk(ctx: "Scoring", question: str, target: str, kind: str, contexts: list[str],
               make: Callable[[str, str, str], Prompt]) -> list[float]:
    """P(yes) of make(question, target, chunk) for each chunk. A chunk too long for the window is judged in pieces and
    gets its highest probability over them (the question and target cut first when they take over half the window)."""
    prompts = [make(question, target, c) for c in contexts]
    return fitted(ctx, ((p, YES_NO_REPLY) for p in prompts), lambda: [ctx.p_yes(p) for p in prompts],
                  lambda w: _in_pieces(ctx, w, question, target, kind, contexts, make))


def _in_pieces(ctx: "Scoring", w: Window, question: str, target: str, kind: str, contexts: list[str],
               make: Callable[[str, str, str], Prompt]) -> tuple[list[float], str | None]:
    """_per_chunk with each chunk too long for the window judged in pieces, and the note naming them."""
    question, target = _fit_question_target(ctx, w, question, target, kind, make("", "", ""), YES_NO_REPLY)
    limit = max(MIN_ITEM, w.room(make(question, target, "")) - YES_NO_REPLY - TAG_TOKENS)
    probs, split = [], []
    for i, c in enumerate(contexts, 1):
        pieces = [c] if w.tokens(c) <= limit else split_text(c, limit, w.tokens)
        if len(pieces) > 1:
            split.append(i)
        probs.append(max(ctx.p_yes(make(question, target, p)) for p in pieces))
    note = (f"chunk(s) {number_list(split)} did not fit {w.named} and were judged in pieces (a chunk's probability "
            "is the highest over its pieces)") if split else None
    return probs, note


def chunk_flags(ctx: "Scoring", question: str, target: str, kind: str, contexts: list[str]) -> list[bool]:
    """Is each chunk useful for the target? In groups of chunks when one call would not fit (a chunk split into
    pieces is relevant when any piece is)."""
    lang = ctx.language.lang
    whole = judge_chunks(question, target, kind, contexts, lang=lang)
    return fitted(ctx, [(whole, verdicts_reply(len(contexts)))],
                  lambda: ctx.ask(whole, verdicts_for(len(contexts))).flags(),
                  lambda w: _grouped_flags(ctx, w, question, target, kind, contexts))


def _grouped_flags(ctx: "Scoring", w: Window, question: str, target: str, kind: str, contexts: list[str]
                   ) -> tuple[list[bool], str]:
    """chunk_flags in groups of chunks that fit, and the note saying so."""
    lang = ctx.language.lang
    question, target = _fit_question_target(ctx, w, question, target, kind,
                                            judge_chunks("", "", kind, [], lang=lang), REPLY_BASE)
    limit = max(MIN_ITEM, w.room(judge_chunks(question, target, kind, [], lang=lang)) - REPLY_BASE)
    pieces, split = context_pieces(contexts, limit - TAG_TOKENS - VERDICT_TOKENS, w)
    groups = pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS + VERDICT_TOKENS, limit)
    relevant = [False] * len(contexts)
    for group in groups:
        got = ctx.ask(judge_chunks(question, target, kind, [text for _, text in group], lang=lang),
                      verdicts_for(len(group)))
        for (i, _), flag in zip(group, got.flags()):
            relevant[i] = relevant[i] or flag
    note = f"the {len(contexts)} chunks did not fit {w.named} in one call: judged in {len(groups)} groups"
    if split:
        note += f"; chunk(s) {number_list(split)} were split into pieces (relevant when any piece is)"
    return relevant, note


def fitted_contexts(ctx: "Scoring", question: str, contexts: list[str]) -> list[str]:
    """The contexts, cut at the end so that the rating prompt fits the judge's context window."""
    lang = ctx.language.lang
    return fitted(ctx, ((rate_context_relevance(question, contexts, v, lang=lang), RATING_REPLY)
                        for v in range(VARIANTS)),
                  lambda: contexts, lambda w: _cut_contexts(ctx, w, question, contexts))


def _cut_contexts(ctx: "Scoring", w: Window, question: str, contexts: list[str]) -> tuple[list[str], str]:
    """The contexts that fit beside both rating prompts, the last one cut, and the note saying so."""
    lang = ctx.language.lang
    room = min(w.room(rate_context_relevance(question, [], v, lang=lang)) for v in range(VARIANTS)) - RATING_REPLY
    kept: list[str] = []
    for c in contexts:
        left = room - TAG_TOKENS - sum(w.tokens(k) + TAG_TOKENS for k in kept)
        if left < MIN_ITEM:
            break
        kept.append(c if w.tokens(c) <= left else truncate(c, left, w.tokens))
    kept = kept or [truncate(contexts[0], MIN_ITEM, w.tokens)]
    return kept, (f"the contexts did not fit {w.named}: the ratings saw {len(kept)} of {len(contexts)} context(s), "
                  "the last one cut")


def context_ratings(ctx: "Scoring", question: str, contexts: list[str]) -> list[int]:
    """The judge's 0/1/2 rating of the contexts for the question, once per differently worded prompt; the contexts
    cut at the end when the prompts would not fit."""
    lang = ctx.language.lang
    contexts = fitted_contexts(ctx, question, contexts)
    return [ctx.ask(rate_context_relevance(question, contexts, v, lang=lang), Rating).rating for v in range(VARIANTS)]
