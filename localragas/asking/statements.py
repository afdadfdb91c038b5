"""The statements of a text that are checked against the contexts (faithfulness's answer, context recall's
reference): the `statements` option of both metrics, defined once here."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core.sentences import sentences
from .claims import claims_of

if TYPE_CHECKING:
    from ..scoring import Scoring

# How a text is cut into the statements judged against the contexts.
STATEMENT_MODES = {
    "claims": "atomic claims extracted by the judge (one extra call per sample)",
    "sentences": "the text's sentences, split locally as in the RAGAS paper (no extra call)",
    "hybrid": "the text's sentences, split locally; only a long sentence is split into claims by the judge (one "
              "extra call per long sentence)",
}
DEFAULT_STATEMENTS = "claims"  # context recall's; faithfulness judges "sentences" (metrics/faithfulness.py)

# hybrid: a sentence longer than this is asked for its claims. 25 words is about two ordinary clauses, where one
# sentence starts to carry several facts a single verdict would judge together; 60 Chinese characters are about as
# much text (a Chinese word is one to three characters).
LONG_WORDS = 25
LONG_CJK_CHARS = 60
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", re.UNICODE)


def is_long(sentence: str) -> bool:
    """Over LONG_WORDS words (outside Chinese) or over LONG_CJK_CHARS Chinese characters."""
    return len(_WORD.findall(sentence)) > LONG_WORDS or len(_CJK.findall(sentence)) > LONG_CJK_CHARS


def statements_of(ctx: "Scoring", text: str, question: str | None, mode: str, what: str = "answer") -> list[str]:
    """The statements of `text` by `mode` (a STATEMENT_MODES key); repeats dropped."""
    if mode == "claims":
        return claims_of(ctx, text, question, what=what)
    parts = sentences(text)
    if mode == "sentences":
        return parts
    out: dict[str, None] = {}
    for s in parts:
        out.update(dict.fromkeys(claims_of(ctx, s, question, what=f"{what}'s sentence") if is_long(s) else [s]))
    return list(out)


def lead_of(text: str, question: str | None, statement: str, most: int) -> tuple[str, str]:
    """What `statement` is read with under lead=preceding: (the question, the `most` sentences of `text` just before
    the statement). A statement that is not one of the text's sentences (a claim the judge extracted) gets no
    sentences, only the question."""
    parts = sentences(text)
    at = parts.index(statement) if statement in parts else 0  # 0: nothing before it
    return (question or "", " ".join(parts[max(0, at - most):at]))
