"""Items (claims, statements, entities) checked against texts (contexts, a reference, an answer), fitted to the
judge's window: in batches of items against groups of texts that fit, a text longer than a group split into pieces.
An item counts as supported when any group supports it; its graded probability is its highest over the groups."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.reply_schemas import verdicts_for
from ..prompts import Prompt, verify_statements
from .text import context_pieces, number_list, pack
from .support_question import PLAIN, Way
from .window import (MIN_ITEM, REPLY_BASE, TAG_TOKENS, VERDICT_TOKENS, YES_NO_REPLY, Window, fitted,
                     verdicts_reply)

if TYPE_CHECKING:
    from .sample_context import Scoring


def check_items(ctx: "Scoring", statements: list[str], contexts: list[str],
                prompt: Callable[..., Prompt] = verify_statements) -> list[bool]:
    """For each statement, do the contexts support it? Batched over statements and grouped over contexts when one
    call would not fit; a statement is supported when any group of contexts supports it. No contexts: nothing is
    supported, no call. `prompt`: the family asked (entity recall asks entities_in_contexts)."""
    lang = ctx.language.lang
    if not contexts:
        return [False] * len(statements)
    whole = prompt(statements, contexts, lang=lang)
    return fitted(ctx, [(whole, verdicts_reply(len(statements)))],
                  lambda: ctx.ask(whole, verdicts_for(len(statements))).flags(),
                  lambda w: _grouped_items(ctx, w, statements, contexts, prompt))


def _grouped_items(ctx: "Scoring", w: Window, statements: list[str], contexts: list[str],
                   prompt: Callable[..., Prompt]) -> tuple[list[bool], str]:
    """check_items in batches of statements against groups of contexts that fit, and the note saying so."""
    lang = ctx.language.lang
    room = w.room(prompt([], [], lang=lang)) - REPLY_BASE

    def cost(s: str) -> int:
        return w.tokens(s) + TAG_TOKENS + VERDICT_TOKENS

    batch_limit = max(MIN_ITEM, room // 3)  # a third of the window for statements and their verdicts
    limit = max(MIN_ITEM, room - max(sum(cost(s) for s in b) for b in pack(statements, cost, batch_limit)))
    pieces, split = context_pieces(contexts, limit - TAG_TOKENS, w)
    groups = pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS, limit)
    flags = [False] * len(statements)
    calls = 0
    for group in groups:  # a statement supported by one group is not asked again
        pending = [i for i, f in enumerate(flags) if not f]
        for batch in pack(pending, lambda i: cost(statements[i]), batch_limit):
            got = ctx.ask(prompt([statements[i] for i in batch], [text for _, text in group], lang=lang),
                          verdicts_for(len(batch)))
            calls += 1
            for i, flag in zip(batch, got.flags()):
                flags[i] = flag
    note = (f"the contexts and statements did not fit {w.named} in one call: "
            f"{len(statements)} statements were judged against {len(groups)} group(s) of contexts in {calls} calls; "
            "a statement counts as supported when any group supports it")
    if split:
        note += f"; context(s) {number_list(split)} were split into pieces"
    return flags, note


def support_probabilities(ctx: "Scoring", statements: list[str], contexts: list[str], way: Way = PLAIN,
                          notes: list[dict] | None = None) -> list[float]:
    """For each statement, P(yes) that the contexts support it: one graded call per statement, the contexts first
    (a shared prefix). When the contexts do not fit beside a statement, they are judged in groups that fit and the
    statement gets its highest probability over the groups. No contexts: 0 for each, no call.
    `way`: how each statement is asked (judge_calls/support_question.py; the default: the support question alone);
    `notes`: one dict per statement, given what the way keeps for its evidence."""
    if not contexts:
        return [0.0] * len(statements)
    if not statements:
        return []
    notes = notes if notes is not None else [{} for _ in statements]
    lang = ctx.language.lang
    asked = [way.prompts(s, contexts, lang) for s in statements]  # built once: checked, then asked
    return fitted(ctx, ((p, YES_NO_REPLY) for ps in asked for p in ps),
                  lambda: [_noted(way.score([ctx.p_yes(prompt) for prompt in ps]), note)
                           for ps, note in zip(asked, notes)],
                  lambda w: _grouped_probabilities(ctx, w, statements, contexts, way, notes))


def _grouped_probabilities(ctx: "Scoring", w: Window, statements: list[str], contexts: list[str], way: Way,
                           notes: list[dict]) -> tuple[list[float], str]:
    """support_probabilities against groups of contexts that fit beside a statement (each statement's highest
    probability over the groups), and the note saying so."""
    lang = ctx.language.lang
    limit = max(MIN_ITEM, min(w.room(p) for s in statements for p in way.prompts(s, [], lang)) - YES_NO_REPLY)
    pieces, split = context_pieces(contexts, limit - TAG_TOKENS, w)
    groups = [[text for _, text in g] for g in pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS, limit)]
    per_group = [[[ctx.p_yes(prompt) for prompt in way.prompts(s, g, lang)] for g in groups] for s in statements]
    probs = [_noted(max((way.score(ps) for ps in got), key=lambda scored: scored[0]), note)
             for got, note in zip(per_group, notes)]
    note = (f"the contexts did not fit {w.named} beside a statement: each of the "
            f"{len(statements)} statements was judged against {len(groups)} group(s) of contexts; its probability "
            "is the highest over the groups")
    if split:
        note += f"; context(s) {number_list(split)} were split into pieces"
    return probs, note


def _noted(got: tuple[float, dict], note: dict) -> float:
    note.update(got[1])
    return got[0]
