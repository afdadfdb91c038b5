"""Is each statement supported by the retrieved contexts? (faithfulness claims, context-recall statements)"""
from __future__ import annotations

from .base import Prompt, contexts_block, numbered

INSTRUCTION = """Above are the retrieved contexts. For each numbered statement below, decide whether the contexts support it.
Answer "yes" only if the contexts state the statement or it follows directly from them.
Answer "no" if the contexts contradict it, or if it adds any detail (a number, date, name, property) the contexts do not give.
Do not use your own knowledge."""


def verify_statements(statements: list[str], contexts: list[str]) -> Prompt:
    user = "\n".join(
        [
            contexts_block(contexts),
            "",
            INSTRUCTION,
            "",
            numbered("statement", statements),
            "",
            f'Reply as {{"verdicts": [{{"id": 1, "verdict": "yes" or "no"}}, ...]}} with exactly {len(statements)} '
            "verdicts, in order.",
        ]
    )
    return Prompt("verify_statements", user)
