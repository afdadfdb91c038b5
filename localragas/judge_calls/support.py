"""Items (claims, statements, entities) checked against texts (contexts, a reference, an answer), fitted to the
judge's window: in batches of items against groups of texts that fit, a text longer than a group split into pieces.
An item counts as supported when any group supports it; its graded probability is its highest over the groups.
A graded verdict is asked by the `question` option of faithfulness and context recall (QUESTIONS): the support
question alone (the default), or the contradiction question too."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.reply_schemas import verdicts_for
from ..prompts import Prompt, contradict_statement, verify_statement, verify_statements
from .text import context_pieces, number_list, pack
from .window import (MIN_ITEM, REPLY_BASE, TAG_TOKENS, VERDICT_TOKENS, YES_NO_REPLY, Window, fitted,
                     verdicts_reply)

if TYPE_CHECKING:
    from .sample_context import Scoring

# the values of the `question` option (faithfulness, context recall), each with what it does; the first the default
QUESTIONS = {
    "supported": "the judge is asked whether the contexts support the statement; its P(yes) is the score",
    "both": "the judge is also asked whether the contexts contradict it; the score is (P(supported) + 1 - "
            "P(contradicted)) / 2 (two calls per statement)",
}
SUPPORTED = "supported"  # the default question: whether the contexts support the statement


def support_family(question: str = SUPPORTED) -> str:
    """The name a calibration map knows the graded scores of `question` by: the support prompt's family for the
    plain question, "verify_statement:question=both" for both, since its score is on another scale."""
    return "verify_statement" + ("" if question == SUPPORTED else f":question={question}")


def support_prompts(statement: str, contexts: list[str], lang: str, question: str = SUPPORTED) -> list[Prompt]:
    """The prompts asked for one statement against these contexts: the support question, then (question=both) the
    contradiction question."""
    asked = [verify_statement(statement, contexts, lang=lang)]
    if question == "both":
        asked.append(contradict_statement(statement, contexts, lang=lang))
    return asked


def _support_score(p: list[float], question: str) -> tuple[float, dict[str, Any]]:
    """A statement's score from its prompts' P(yes) `p` (in the order of support_prompts), and what its evidence keeps
    beside it: with question=both, p_supported_only (the support question's P(yes)) and p_contradicted."""
    if question != "both":
        return p[0], {}
    supported, contradicted = p
    return (supported + 1 - contradicted) / 2, {"p_supported_only": round(supported, 4),
                                                "p_contradicted": round(contradicted, 4)}


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


def support_probabilities(ctx: "Scoring", statements: list[str], contexts: list[str], question: str = SUPPORTED,
                          notes: list[dict] | None = None) -> list[float]:
    """For each statement, P(yes) that the contexts support it: one graded call per statement, the contexts first
    (a shared prefix). When the contexts do not fit beside a statement, they are judged in groups that fit and the
    statement gets its highest probability over the groups. No contexts: 0 for each, no call.
    `question`: how each statement is asked (QUESTIONS; the default: the support question alone); `notes`: one dict
    per statement, given what that question keeps for its evidence."""
    if not contexts:
        return [0.0] * len(statements)
    if not statements:
        return []
    notes = notes if notes is not None else [{} for _ in statements]
    lang = ctx.language.lang
    asked = [support_prompts(s, contexts, lang, question) for s in statements]  # built once: checked, then asked
    return fitted(ctx, ((p, YES_NO_REPLY) for ps in asked for p in ps),
                  lambda: [_noted(_support_score([ctx.p_yes(prompt) for prompt in ps], question), note)
                           for ps, note in zip(asked, notes)],
                  lambda w: _grouped_probabilities(ctx, w, statements, contexts, question, notes))


def _grouped_probabilities(ctx: "Scoring", w: Window, statements: list[str], contexts: list[str], question: str,
                           notes: list[dict]) -> tuple[list[float], str]:
    """support_probabilities against groups of contexts that fit beside a statement (each statement's highest
    probability over the groups), and the note saying so."""
    lang = ctx.language.lang
    limit = max(MIN_ITEM, min(w.room(p) for s in statements for p in support_prompts(s, [], lang, question))
                - YES_NO_REPLY)
    pieces, split = context_pieces(contexts, limit - TAG_TOKENS, w)
    groups = [[text for _, text in g] for g in pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS, limit)]
    per_group = [[[ctx.p_yes(prompt) for prompt in support_prompts(s, g, lang, question)] for g in groups]
                 for s in statements]
    probs = [_noted(max((_support_score(ps, question) for ps in got), key=lambda scored: scored[0]), note)
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
