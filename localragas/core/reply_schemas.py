"""The structured outputs the judge is constrained to: pydantic models, turned into bounded JSON schemas here only.

Every list has maxItems and every string maxLength, so a grammar built from the schema always closes: even a
135M model cannot loop forever. Verdict arrays have exactly one item per thing judged, each with its fixed id.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

MAX_CLAIMS = 16
MAX_CLAIM_CHARS = 200
MAX_QUESTION_CHARS = 200
N_QUESTIONS = 3
MAX_ENTITIES = 24
MAX_ENTITY_CHARS = 80

ClaimText = Annotated[str, StringConstraints(max_length=MAX_CLAIM_CHARS)]
QuestionText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUESTION_CHARS)]


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Claims(Output):
    """Atomic, self-contained statements taken from a text."""

    claims: list[ClaimText] = Field(max_length=MAX_CLAIMS)

    def cleaned(self) -> list[str]:
        """Claims stripped, empty ones and exact repeats dropped, order kept."""
        seen: dict[str, None] = {}
        for c in self.claims:
            c = " ".join(c.split())
            if c and c not in seen:
                seen[c] = None
        return list(seen)


class GeneratedQuestions(Output):
    """Questions the answer would answer, and whether the answer dodges the question."""

    # The flag comes first: decided before the questions are written (asked after them, a 1.5B judge said
    # "true" for all 16 example answers; asked first, it was right on all five probed).
    noncommittal: bool
    questions: list[QuestionText] = Field(min_length=N_QUESTIONS, max_length=N_QUESTIONS)


MAX_REFERENCE_CHARS = 600


class GeneratedItem(Output):
    """A test-set question written from document chunks, and its reference answer (localragas generate)."""

    question: QuestionText
    reference: Annotated[str, StringConstraints(min_length=1, max_length=MAX_REFERENCE_CHARS)]


class GeneratedLinkedItem(Output):
    """A multi-chunk test-set item: a fact of each chunk first (each checked against one of the chunks alone, one
    fact in each), then the question that needs both and its reference answer (localragas generate, kind multi)."""

    fact_1: Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLAIM_CHARS)]
    fact_2: Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLAIM_CHARS)]
    question: QuestionText
    reference: Annotated[str, StringConstraints(min_length=1, max_length=MAX_REFERENCE_CHARS)]


class GeneratedQuestion(Output):
    """A question on the chunk's topic that the documents do not answer (localragas generate, kind unanswerable)."""

    question: QuestionText


# A user's message rewritten to stand alone is about as long as the message itself (references spelled out): longer
# than a generated question may be, bounded all the same (a longer message is used as written: judge_calls/standalone)
MAX_STANDALONE_CHARS = 1000


class StandaloneQuestion(Output):
    """A conversation's latest user message rewritten into a question that stands alone given the conversation so
    far (prompts/standalone.py)."""

    question: Annotated[str, StringConstraints(min_length=1, max_length=MAX_STANDALONE_CHARS)]


class Entities(Output):
    """Named entities of a text (context entity recall): people, places, organisations, dates, numbers, products."""

    entities: list[Annotated[str, StringConstraints(max_length=MAX_ENTITY_CHARS)]] = Field(max_length=MAX_ENTITIES)

    def cleaned(self) -> list[str]:
        """Entities stripped; empty ones and repeats (ignoring case and spacing) dropped, order kept."""
        seen: dict[str, str] = {}
        for e in self.entities:
            e = " ".join(e.split()).strip(" .,;:\"'“”‘’「」《》()（）")
            if e and e.casefold() not in seen:
                seen[e.casefold()] = e
        return list(seen.values())


class Rating(Output):
    """How relevant the retrieved contexts are to the question: 0 not, 1 partly, 2 fully (context relevance)."""

    rating: Literal[0, 1, 2]


class Verdicts(Output):
    """One yes/no verdict per item, in the order the items were given. Build with `verdicts_for(n)`."""

    verdicts: tuple[Any, ...]

    def flags(self) -> list[bool]:
        return [v.verdict == "yes" for v in self.verdicts]


@lru_cache(maxsize=256)
def verdicts_for(n: int) -> type[Verdicts]:
    """A Verdicts model whose array has exactly n items, item i carrying the constant id i (1-based)."""
    if n < 1:
        raise ValueError("verdicts_for needs n >= 1")
    items = tuple(
        create_model(
            f"Verdict{i}",
            __base__=Output,
            id=(Literal[i], ...),  # type: ignore[valid-type, arg-type]
            verdict=(Literal["yes", "no"], ...),  # type: ignore[arg-type, maybe-unrecognized-str-typeform]
        )
        for i in range(1, n + 1)
    )
    return create_model(f"Verdicts{n}", __base__=Verdicts, verdicts=(tuple[items], ...))  # type: ignore[valid-type]


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline_refs(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k not in ("$defs", "title", "description")}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


@lru_cache(maxsize=512)
def schema_text(output: type[Output]) -> str:
    """The JSON schema of an output model with every $ref inlined, as a canonical JSON string."""
    raw = output.model_json_schema()
    schema = _inline_refs(raw, raw.get("$defs", {}))
    _check_bounded(schema, output.__name__)
    return json.dumps(schema, sort_keys=True, ensure_ascii=False)


def json_schema(output: type[Output]) -> dict[str, Any]:
    return json.loads(schema_text(output))


def _check_bounded(node: Any, where: str) -> None:
    """Refuse a schema with an unbounded list or string: a small model would loop on it."""
    if isinstance(node, dict):
        if node.get("type") == "array" and "prefixItems" not in node and "maxItems" not in node:
            raise ValueError(f"{where}: array without maxItems")
        if node.get("type") == "string" and "enum" not in node and "const" not in node and "maxLength" not in node:
            raise ValueError(f"{where}: string without maxLength")
        for v in node.values():
            _check_bounded(v, where)
    elif isinstance(node, list):
        for v in node:
            _check_bounded(v, where)


class YesNo(Output):
    """A graded verdict: how the judge's probability for its first reply word splits between "yes" and "no".

    Not a schema the judge is constrained to: the judge is asked a yes/no question and its next-token distribution
    is read (Judging.p_yes(prompt), see judges/yes_no.py). `p_yes` = P(yes) / (P(yes) + P(no)); `mass` =
    P(yes) + P(no) among the top tokens, how much of the judge's probability went to either word at all."""

    p_yes: float = Field(ge=0.0, le=1.0)
    mass: float = Field(ge=0.0, le=1.0)


class Choices(Output):
    """The judge's next-token probabilities over a few one-token options (a rubric's levels: "1" … "5"), normalised
    over the options; read like YesNo (Judging.choice_probabilities, judges/yes_no.py), never generated. `mass`: the
    options' share of the judge's probability among its top tokens."""

    probabilities: dict[str, float]
    mass: float = Field(ge=0.0, le=1.0)
