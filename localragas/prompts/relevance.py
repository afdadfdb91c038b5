"""Is each retrieved chunk useful for the expected answer? (context precision)"""
from __future__ import annotations

from .base import Prompt, contexts_block, tagged

INSTRUCTION = """Above are retrieved contexts, numbered in ranked order. Below are a question and its {target}.
For each context, decide whether it was useful for arriving at that {target}: "yes" if it contains information the {target} uses, "no" if it is unrelated or does not help."""


def judge_chunks(question: str, target: str, target_kind: str, contexts: list[str]) -> Prompt:
    """target_kind is "reference answer" or "answer"."""
    user = "\n".join(
        [
            contexts_block(contexts),
            "",
            INSTRUCTION.format(target=target_kind),
            "",
            tagged("question", question),
            tagged("reference" if target_kind.startswith("reference") else "answer", target),
            "",
            f'Reply as {{"verdicts": [{{"id": 1, "verdict": "yes" or "no"}}, ...]}} with exactly {len(contexts)} '
            "verdicts, one per context, in order.",
        ]
    )
    return Prompt("judge_chunks", user)
