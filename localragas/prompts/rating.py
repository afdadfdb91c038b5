"""Rate how relevant the retrieved contexts are to the question: 0, 1 or 2 (context relevance).

As ragas's ContextRelevance, two differently worded prompts rate the same contexts and their ratings are averaged,
so that one wording's bias weighs less.
"""
from __future__ import annotations

from ..data.language import detect
from .base import SYSTEMS, Prompt, closing, contexts_block, tagged

VARIANTS = 2
INSTRUCTIONS = {
    "en": (
        """Above are the retrieved contexts. Rate whether they contain the information needed to answer the question below.
Use only what the contexts and the question say, not your own knowledge.
0: the contexts contain no information relevant to answering the question.
1: the contexts partly contain information relevant to answering the question.
2: the contexts contain the information needed to answer the question.""",
        """Above are the retrieved contexts. To what extent do they provide the information necessary to answer the question below?
Rely only on the contexts and the question, not on prior knowledge.
Give 0 if they do not contain any relevant information, 1 if they contain some of it, 2 if they contain it.""",
    ),
    "zh": (
        """上面是检索到的上下文。请评定它们是否包含回答下面问题所需的信息。
只根据上下文和问题本身，不要用你自己的知识。
0：上下文不含任何与回答该问题相关的信息。
1：上下文部分包含回答该问题的相关信息。
2：上下文包含回答该问题所需的信息。""",
        """上面是检索到的上下文。它们在多大程度上提供了回答下面问题所必需的信息？
只依据上下文和问题，不依据已有知识。
完全不含相关信息给 0，含有部分相关信息给 1，含有所需信息给 2。""",
    ),
}
_REPLY = {"en": 'Reply as {"rating": 0, 1 or 2}.', "zh": '按 {"rating": 0、1 或 2} 的格式回复。'}


def rate_context_relevance(question: str, contexts: list[str], variant: int = 0, lang: str | None = None) -> Prompt:
    """variant: 0 or 1, the two wordings."""
    lang = lang or detect(question)
    user = "\n".join(
        [contexts_block(contexts, lang), "", INSTRUCTIONS[lang][variant], "", tagged("question", question), "",
         closing(lang, _REPLY[lang])]
    )
    return Prompt("rate_context_relevance", user, SYSTEMS[lang])
