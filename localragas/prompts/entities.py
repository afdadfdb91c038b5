"""List the named entities of a text (context entity recall: the reference's entities), in the text's language."""
from __future__ import annotations

from ..data.language import detect
from ..core.reply_schemas import MAX_ENTITIES
from .base import SYSTEMS, Prompt, closing, tagged

INSTRUCTIONS = {
    "en": f"""List the unique named entities in the text below: people, places, organisations, products, works, events, dates, numbers with their units.
Write each entity once, as it appears in the text; different forms or mentions of the same entity are one entity. At most {MAX_ENTITIES}.
A text without named entities gives an empty list.

Example text: "The Eiffel Tower, located in Paris, France, was completed in 1889 for the World's Fair. It is 330 metres tall."
Example reply: {{"entities": ["Eiffel Tower", "Paris", "France", "1889", "World's Fair", "330 metres"]}}
""",
    "zh": f"""列出下面文本中不重复的命名实体：人物、地点、组织、产品、作品、事件、日期、带单位的数字。
每个实体按原文写一次；同一实体的不同说法或多次提及算作一个实体。最多 {MAX_ENTITIES} 个。
没有命名实体的文本给出空列表。

示例文本："埃菲尔铁塔位于法国巴黎，于1889年为世界博览会建成，高330米。"
示例回复：{{"entities": ["埃菲尔铁塔", "法国", "巴黎", "1889年", "世界博览会", "330米"]}}
""",
}
_REPLY = {"en": 'Reply as {"entities": [...]}.', "zh": '按 {"entities": [...]} 的格式回复。'}


def extract_entities(text: str, lang: str | None = None) -> Prompt:
    lang = lang or detect(text)
    user = "\n".join([INSTRUCTIONS[lang], tagged("reference", text), closing(lang, _REPLY[lang])])
    return Prompt("extract_entities", user, SYSTEMS[lang])
