"""A short digest of the built-in prompts a run asks, for the resume checkpoints' keys (run.checkpoint.run_key).

The judge cache keys on the full text asked, so a changed prompt is asked again there; a checkpoint keeps finished
outcomes under the run's key, and without the prompts' text in that key a killed run resumed after an upgrade that
changed a built-in prompt would mix outcomes asked with the old text into the new run's result. Each family is
rendered on one fixed probe, in every language and every variant its builder has (target kinds, rating variants), so a change anywhere in what is asked (instructions, system prompt, reminder, reply line, layout) changes
the digest. The user's overrides are not applied: Judging.scoring_fingerprint holds their hash.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .base import Prompt
from .claims import extract_claims
from .entities import extract_entities
from .generation import TASKS, question_answerable, write_item, write_unanswerable
from .mentions import entities_in_contexts
from .questions import check_question, generate_questions
from .rating import VARIANTS, rate_context_relevance
from .relevance import judge_chunk, judge_chunks
from .verdicts import contradict_statement, verify_statement, verify_statements

LANGS = ("en", "zh")
STATEMENT = "A tram ran in Oslo in 1875."
CONTEXTS = [STATEMENT]
QUESTION = "When did the tram run?"
TARGET_KINDS = ("reference answer", "answer", "question")  # prompts.relevance: "question" judges by the question alone

S, C, Q = STATEMENT, CONTEXTS, QUESTION  # short names for the table below
# family (Prompt.name) -> its prompts on the probe in one language, every variant of its builder
PROBES: dict[str, Callable[[str], list[Prompt]]] = {
    "extract_claims": lambda lang: [extract_claims(S, Q, lang), extract_claims(S, None, lang)],
    "extract_entities": lambda lang: [extract_entities(S, lang)],
    "entities_in_contexts": lambda lang: [entities_in_contexts([S], C, lang)],
    "generate_questions": lambda lang: [generate_questions(S, lang, other, checked)
                                        for other in LANGS for checked in (False, True)],
    "check_question": lambda lang: [check_question(S, Q, lang)],
    "rate_context_relevance": lambda lang: [rate_context_relevance(Q, C, v, lang) for v in range(VARIANTS)],
    "judge_chunk": lambda lang: [judge_chunk(Q, "" if k == "question" else S, k, S, lang) for k in TARGET_KINDS],
    "judge_chunks": lambda lang: [judge_chunks(Q, "" if k == "question" else S, k, C, lang) for k in TARGET_KINDS],
    "verify_statements": lambda lang: [verify_statements([S], C, lang)],
    "verify_statement": lambda lang: [verify_statement(S, C, lang)],
    "contradict_statement": lambda lang: [contradict_statement(S, C, lang)],
    **{f"write_{kind}": (lambda lang, kind=kind: [write_item(kind, C, lang)]) for kind in TASKS},
    "write_unanswerable": lambda lang: [write_unanswerable(S, lang)],
    "question_answerable": lambda lang: [question_answerable(C, Q, lang)],
}


def probe(family: str, lang: str) -> list[Prompt] | None:
    """The family's prompts on the probe in `lang`; None for a family that is not built in (a custom metric's,
    a plugin's: its name alone goes into the digest)."""
    return PROBES[family](lang) if family in PROBES else None


def prompts_digest(families: Iterable[str], own: Mapping[str, str] | None = None) -> str:
    """sha256 (first 12 hex) of the families' prompts rendered on the probe in every language, in name order (the
    order they are asked in does not matter, a repeated one counts once). `own` maps a family that is not built in (a
    custom criterion's or rubric's) to its template (question, fields, levels), which then counts in its place. About a
    millisecond for a run's families."""
    rendered = []
    for family in sorted(set(families)):
        asked = [[p.name, p.system, p.user] for lang in LANGS for p in probe(family, lang) or ()]
        if not asked and own and family in own:
            asked = [[family, own[family]]]
        rendered.append([family, asked])
    return hashlib.sha256(json.dumps(rendered, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def metrics_digest(metrics: Iterable[Any]) -> str:
    """prompts_digest of what these metrics (metrics.base.Metric, a higher layer: not imported) ask: their prompt
    families, and a custom metric's own template."""
    chosen = list(metrics)
    return prompts_digest((p for m in chosen for p in m.prompts),
                          {p: m.template for m in chosen if getattr(m, "template", None) is not None for p in m.prompts})
