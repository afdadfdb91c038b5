"""Split a text (an answer or a reference) into atomic, self-contained claims."""
from __future__ import annotations

from .base import Prompt, tagged

INSTRUCTION = """Break the text below into short, atomic factual claims.
Rules:
- One fact per claim; split sentences that state several facts.
- Each claim must stand alone: replace pronouns with the names they refer to.
- Keep the wording and numbers of the text; do not add facts, opinions or explanations.
- Skip greetings, hedges and filler such as "I hope this helps". A text with no factual claim gives an empty list.

Example text: "Java is an object-oriented language developed by Sun Microsystems. It was released in 1995."
Example reply: {"claims": ["Java is an object-oriented language.", "Java was developed by Sun Microsystems.", "Java was released in 1995."]}
"""


def extract_claims(text: str, question: str | None = None) -> Prompt:
    parts = [INSTRUCTION]
    if question:
        parts.append("The text answers this question (use it only to resolve what the text refers to):")
        parts.append(tagged("question", question))
    parts.append(tagged("answer", text))
    parts.append('Reply as {"claims": [...]}.')
    return Prompt("extract_claims", "\n".join(parts))
