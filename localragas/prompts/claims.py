"""Split a text (an answer or a reference) into atomic, self-contained claims, in the text's own language."""
from __future__ import annotations

from ..data.language import detect
from .base import SYSTEMS, Prompt, closing, tagged

INSTRUCTIONS = {
    "en": """Break the text below into short, atomic factual claims.
Rules:
- One fact per claim; split sentences that state several facts.
- Each claim must stand alone: replace pronouns with the names they refer to.
- Keep the wording and numbers of the text; do not add facts, opinions or explanations.
- Skip greetings, hedges and filler such as "I hope this helps". A text with no factual claim gives an empty list.

Example text: "Java is an object-oriented language developed by Sun Microsystems. It was released in 1995."
Example reply: {"claims": ["Java is an object-oriented language.", "Java was developed by Sun Microsystems.", "Java was released in 1995."]}
""",
    "zh": """把下面的文本拆分成简短的原子事实陈述。
规则：
- 每条陈述只含一个事实；一句话说了几个事实，就拆成几条。
- 每条陈述必须能单独成立：把代词换成它所指的名称。
- 保留原文的措辞和数字，用原文的语言书写；不要添加事实、观点或解释。
- 跳过问候、含糊其辞和"希望对你有帮助"之类的客套话。没有任何事实陈述的文本给出空列表。

示例文本："长城位于中国北方，全长两万多公里。它始建于公元前7世纪。"
示例回复：{"claims": ["长城位于中国北方。", "长城全长两万多公里。", "长城始建于公元前7世纪。"]}
""",
}
INSTRUCTION = INSTRUCTIONS["en"]
_QUESTION = {
    "en": "The text answers this question (use it only to resolve what the text refers to):",
    "zh": "这段文本回答的是下面这个问题（只用它来弄清文本所指的对象）：",
}
_REPLY = {"en": 'Reply as {"claims": [...]}.', "zh": '按 {"claims": [...]} 的格式回复。'}


def extract_claims(text: str, question: str | None = None, lang: str | None = None) -> Prompt:
    """lang: the instructions' language; default the text's own (claims come out in the language they are asked in)."""
    lang = lang or detect(text)
    parts = [INSTRUCTIONS[lang]]
    if question:
        parts.append(_QUESTION[lang])
        parts.append(tagged("question", question))
    parts.append(tagged("answer", text))
    parts.append(closing(lang, _REPLY[lang]))
    return Prompt("extract_claims", "\n".join(parts), SYSTEMS[lang])
