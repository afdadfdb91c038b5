"""The statements of a text that are checked against the contexts (faithfulness's answer, context recall's
reference): the `statements` option of both metrics, defined once here."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.sentences import sentences
from .claims import claims_of

if TYPE_CHECKING:
    from .sample_context import Scoring

# How a text is cut into the statements judged against the contexts.
STATEMENT_MODES = {
    "claims": "atomic claims extracted by the judge (one extra call per sample)",
    "sentences": "the text's sentences, split locally as in the RAGAS paper (no extra call)",
}
DEFAULT_STATEMENTS = "claims"  # context recall's; faithfulness judges "sentences" (metrics/faithfulness.py)


def statements_of(ctx: "Scoring", text: str, question: str | None, mode: str, what: str = "answer") -> list[str]:
    """The statements of `text` by `mode` (a STATEMENT_MODES key)."""
    if mode == "claims":
        return claims_of(ctx, text, question, what=what)
    return sentences(text)
