"""Every built-in prompt family, one record each: its builder, the model of its reply, the instruction blocks a user's
override replaces (prompts/overrides.py), its prompts on the digest's fixed probe (prompts/digest.py) and its
smallest size for the judge's window check (judge_calls/window.py). Those modules derive their tables from FAMILIES; a
new family is one PromptFamily below (and its line in docs/architecture.md).

The token sizes the window arithmetic assumes are declared here too, since a family's smallest size is stated in
them (judge_calls/window.py fits prompts with the same figures).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.reply_schemas import (Claims, Entities, GeneratedItem, GeneratedLinkedItem, GeneratedQuestion,
                                  GeneratedQuestions, Output, Rating, StandaloneQuestion, Verdicts, YesNo)
from ..data.conversation_models import Message
from . import claims, conversation, entities, generation, mentions, questions, rating, relevance, standalone, verdicts
from .base import Prompt

# --- token sizes the window arithmetic assumes --------------------------------------------------------------------
TAG_TOKENS = 10  # the <context id="12"> … </context> wrapper of one item
VERDICT_TOKENS = 16  # one {"id": 12, "verdict": "yes"} in a reply
REPLY_BASE = 16  # {"verdicts": [ … ]}
YES_NO_REPLY = 4  # one word
RATING_REPLY = 16  # {"rating": 2}
QUESTIONS_REPLY = 256  # {"noncommittal": …, "questions": [3 questions of at most 200 characters]}
CLAIMS_REPLY_CAP = 1200
STANDALONE_REPLY_CAP = 600  # {"question": …} of at most MAX_STANDALONE_CHARS characters
MIN_ITEM = 64  # the smallest piece of text worth judging on its own


def verdicts_reply(n: int) -> int:
    """Tokens of a reply with n JSON verdicts."""
    return REPLY_BASE + VERDICT_TOKENS * n


# The smallest prompt of a family for the window check: (the prompt with empty data, the data tokens of one item, the
# reply tokens for one item). A custom metric states its own (Metric.window_prompts).
Smallest = tuple[Callable[[], Prompt], int, int]


@dataclass(frozen=True)
class PromptFamily:
    """One prompt family (Prompt.name): what every table about prompt families is derived from.

    build: the builder (its prompts carry `name`); reply: the model of the judge's reply (YesNo: one word, whose
    next-token P(yes) is read; Verdicts: built per call with core.reply_schemas.verdicts_for(n)); probe: its prompts on
    the fixed probe in one language, every variant of the builder (prompts/digest.py); instructions: every built-in
    instruction block (each language and variant) a user's text replaces (`--prompt FAMILY=FILE`), () for a family that
    cannot be overridden; smallest: its smallest prompt for the window check, None when not checked before a run
    (generate fits its chunks as it asks)."""

    name: str
    build: Callable[..., Prompt]
    reply: type[Output]
    probe: Callable[[str], list[Prompt]]
    instructions: tuple[str, ...] = ()
    smallest: Smallest | None = None


# --- the fixed probe every family is rendered on (prompts/digest.py) ------------------------------------------------
LANGS = ("en", "zh")
STATEMENT = "A tram ran in Oslo in 1875."
CONTEXTS = [STATEMENT]
QUESTION = "When did the tram run?"
HISTORY = [Message(role="user", content=QUESTION), Message(role="assistant", content=STATEMENT)]
FOLLOW_UP = "And in Bergen?"
TARGET_KINDS = ("reference answer", "answer", "question")  # prompts.relevance: "question" judges by the question alone
S, C, Q = STATEMENT, CONTEXTS, QUESTION  # short names for the table below
ONE_ITEM = 2 * (MIN_ITEM + TAG_TOKENS)  # the data of one statement and one context
ONE_CHUNK = 2 * MIN_ITEM + TAG_TOKENS  # the data of a question (or an entity) and one context
ONE_TALK = 3 * (MIN_ITEM + TAG_TOKENS)  # the data of an earlier message, a message (or request) and a reply


def _targets(texts: dict[str, str]) -> tuple[str, ...]:
    """A relevance instruction for each target kind it names, in each language."""
    kinds = {"en": ("reference answer", "answer"), "zh": ("参考答案", "回答")}
    return tuple(t.format(target=k) for lang, t in texts.items() for k in kinds[lang])


def _all(*texts: dict[str, str]) -> tuple[str, ...]:
    return tuple(t for by_lang in texts for t in by_lang.values())


def _written(kind: str) -> Callable[[str], list[Prompt]]:
    """The probe of the family that writes a test item of `kind`."""
    return lambda lang: [generation.write_item(kind, C, lang)]


_BUILT_IN = [
    PromptFamily("extract_claims", claims.extract_claims, Claims,
                 lambda lang: [claims.extract_claims(S, Q, lang), claims.extract_claims(S, None, lang)],
                 _all(claims.INSTRUCTIONS),
                 (lambda: claims.extract_claims("", "?"), MIN_ITEM, CLAIMS_REPLY_CAP // 4)),
    PromptFamily("extract_entities", entities.extract_entities, Entities,
                 lambda lang: [entities.extract_entities(S, lang)], _all(entities.INSTRUCTIONS),
                 (lambda: entities.extract_entities(""), MIN_ITEM, CLAIMS_REPLY_CAP // 4)),
    PromptFamily("entities_in_contexts", mentions.entities_in_contexts, Verdicts,
                 lambda lang: [mentions.entities_in_contexts([S], C, lang)], _all(mentions.INSTRUCTIONS),
                 (lambda: mentions.entities_in_contexts([], []), ONE_CHUNK, verdicts_reply(1))),
    PromptFamily("generate_questions", questions.generate_questions, GeneratedQuestions,
                 lambda lang: [questions.generate_questions(S, lang, other, checked)
                               for other in LANGS for checked in (False, True)], _all(questions.INSTRUCTIONS),
                 (lambda: questions.generate_questions("", checked=True), MIN_ITEM, QUESTIONS_REPLY)),
    PromptFamily("check_question", questions.check_question, YesNo,
                 lambda lang: [questions.check_question(S, Q, lang)], _all(questions.CHECK),
                 (lambda: questions.check_question("", ""), ONE_CHUNK, YES_NO_REPLY)),
    PromptFamily("rate_context_relevance", rating.rate_context_relevance, Rating,
                 lambda lang: [rating.rate_context_relevance(Q, C, v, lang) for v in range(rating.VARIANTS)],
                 tuple(t for pair in rating.INSTRUCTIONS.values() for t in pair),
                 (lambda: rating.rate_context_relevance("?", []), ONE_CHUNK, RATING_REPLY)),
    PromptFamily("judge_chunk", relevance.judge_chunk, YesNo,
                 lambda lang: [relevance.judge_chunk(Q, "" if k == "question" else S, k, S, lang)
                               for k in TARGET_KINDS],
                 _targets(relevance.ONE) + _all(relevance.ONE_QUESTION_ONLY),
                 (lambda: relevance.judge_chunk("?", "", "reference answer", ""), ONE_CHUNK, YES_NO_REPLY)),
    PromptFamily("judge_chunks", relevance.judge_chunks, Verdicts,
                 lambda lang: [relevance.judge_chunks(Q, "" if k == "question" else S, k, C, lang)
                               for k in TARGET_KINDS],
                 _targets(relevance.INSTRUCTIONS) + _all(relevance.QUESTION_ONLY),
                 (lambda: relevance.judge_chunks("?", "", "reference answer", []), ONE_CHUNK, verdicts_reply(1))),
    PromptFamily("verify_statements", verdicts.verify_statements, Verdicts,
                 lambda lang: [verdicts.verify_statements([S], C, lang)], _all(verdicts.INSTRUCTIONS),
                 (lambda: verdicts.verify_statements([], []), ONE_ITEM, verdicts_reply(1))),
    PromptFamily("verify_statement", verdicts.verify_statement, YesNo,
                 lambda lang: [verdicts.verify_statement(S, C, lang)], _all(verdicts.ONE),
                 (lambda: verdicts.verify_statement("", []), ONE_ITEM, YES_NO_REPLY)),
    PromptFamily("contradict_statement", verdicts.contradict_statement, YesNo,
                 lambda lang: [verdicts.contradict_statement(S, C, lang)], _all(verdicts.CONTRADICT),
                 (lambda: verdicts.contradict_statement("", []), ONE_ITEM, YES_NO_REPLY)),
    # a conversation's follow-up turn, rewritten before its metrics (judge_calls/standalone.py)
    PromptFamily(standalone.FAMILY, standalone.standalone_question, StandaloneQuestion,
                 lambda lang: [standalone.standalone_question(HISTORY, FOLLOW_UP, lang)], _all(standalone.INSTRUCTIONS),
                 (lambda: standalone.standalone_question([], ""), ONE_ITEM, 2 * MIN_ITEM)),
    # localragas generate's
    *(PromptFamily(f"write_{kind}", generation.write_item, GeneratedLinkedItem if kind == "multi" else GeneratedItem,
                   _written(kind)) for kind in generation.TASKS),
    PromptFamily("write_unanswerable", generation.write_unanswerable, GeneratedQuestion,
                 lambda lang: [generation.write_unanswerable(S, lang)]),
    PromptFamily("question_answerable", generation.question_answerable, YesNo,
                 lambda lang: [generation.question_answerable(C, Q, lang)], (),
                 (lambda: generation.question_answerable([""], "?"), ONE_CHUNK, YES_NO_REPLY)),
    # a conversation's (knowledge retention, conversation completeness): one earlier message, the user's message and
    # the reply are the data of the smallest
    PromptFamily("knowledge_retained", conversation.knowledge_retained, YesNo,
                 lambda lang: [conversation.knowledge_retained(HISTORY, FOLLOW_UP, S, lang)],
                 _all(conversation.RETAINED),
                 (lambda: conversation.knowledge_retained([], "", ""), ONE_TALK, YES_NO_REPLY)),
    PromptFamily("request_addressed", conversation.request_addressed, YesNo,
                 lambda lang: [conversation.request_addressed([*HISTORY, Message(role="user", content=FOLLOW_UP),
                                                              Message(role="assistant", content=S)], FOLLOW_UP, 3,
                                                             lang)],
                 _all(conversation.ADDRESSED),
                 (lambda: conversation.request_addressed([], "", 1), ONE_TALK, YES_NO_REPLY)),
]
FAMILIES: dict[str, PromptFamily] = {f.name: f for f in _BUILT_IN}
