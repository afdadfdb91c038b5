"""Questions generated from an answer (answer relevancy), and each checked against the answer: do the answer's own
statements reply to it? From the beginning of an answer too long for the window."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.reply_schemas import GeneratedQuestions
from ..prompts import Prompt, check_question, generate_questions
from .text import truncate
from .window import MIN_ITEM, QUESTIONS_REPLY, YES_NO_REPLY, Window, fitted

if TYPE_CHECKING:
    from .sample_context import Scoring


def _answer_that_fits(ctx: "Scoring", answer: str, prompt: Callable[[str], Prompt], reply: int, purpose: str) -> str:
    """The answer, or its beginning when prompt(answer) does not fit the window with room for the reply."""
    return fitted(ctx, [(prompt(answer), reply)], lambda: answer,
                  lambda w: _answer_cut(w, answer, prompt, reply, purpose))


def _answer_cut(w: Window, answer: str, prompt: Callable[[str], Prompt], reply: int, purpose: str
                ) -> tuple[str, str]:
    """The beginning of the answer that fits beside prompt("") and the reply, and the note saying so."""
    limit = max(MIN_ITEM, w.room(prompt("")) - reply)
    return truncate(answer, limit, w.tokens), (f"the answer ({w.tokens(answer)} tokens) was truncated to its first "
                                               f"{limit} tokens to fit {w.named} for {purpose}")


def questions_for(ctx: "Scoring", answer: str, checked: bool = False) -> GeneratedQuestions:
    """The questions an answer answers; from the beginning of an answer too long for the window. checked: the
    prompt for questions that will be checked (prompts.questions.generate_questions)."""

    def prompt(text: str) -> Prompt:
        return generate_questions(text, ctx.language.lang, ctx.language.question, checked=checked)

    shown = _answer_that_fits(ctx, answer, prompt, QUESTIONS_REPLY, "generating questions")
    return ctx.ask(prompt(shown), GeneratedQuestions)


def answered_probabilities(ctx: "Scoring", answer: str, questions: list[str]) -> list[float]:
    """For each question generated from the answer, P(yes) that the answer's own statements reply to it: one graded
    call per distinct question, the answer first (a shared prefix, the same text in every call: the beginning of an
    answer too long to fit beside the longest question)."""
    lang = ctx.language.lang
    distinct = list(dict.fromkeys(questions))

    def beside_longest(w: Window) -> tuple[str, None]:
        longest = max(distinct, key=w.tokens)
        return _answer_that_fits(ctx, answer, lambda text: check_question(text, longest, lang=lang), YES_NO_REPLY,
                                 "checking the generated questions"), None

    shown = fitted(ctx, ((check_question(answer, q, lang=lang), YES_NO_REPLY) for q in distinct), lambda: answer,
                   beside_longest)
    p = {q: ctx.p_yes(check_question(shown, q, lang=lang)) for q in distinct}
    return [p[q] for q in questions]
