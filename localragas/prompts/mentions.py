"""Do the retrieved contexts mention each entity? (context entity recall: the reference's entities in the contexts)"""
from __future__ import annotations

from .base import Prompt
from .verdicts import verdicts_prompt

INSTRUCTIONS = {
    "en": """Above are the retrieved contexts. For each numbered entity below, decide whether the contexts mention that same entity.
Answer "yes" if the contexts name it, in any form: another spelling, an abbreviation, a translation, a number written differently ("1,000" and "one thousand").
Answer "no" if the contexts do not mention it, or mention only a different entity of the same kind (another date, another person).""",
    "zh": """上面是检索到的上下文。对下面每个编号的实体，判断上下文是否提到了同一个实体。
如果上下文以任何形式提到了它（不同写法、缩写、译名、不同写法的数字，如"1000"和"一千"），回答 "yes"。
如果上下文没有提到它，或者只提到同类的另一个实体（另一个日期、另一个人），回答 "no"。""",
}


def entities_in_contexts(entities: list[str], contexts: list[str], lang: str | None = None) -> Prompt:
    return verdicts_prompt("entities_in_contexts", INSTRUCTIONS, "entity", entities, contexts, lang)
