"""A user's own criterion (a yes/no question, read as P(yes)) and rubric (levels 0-9, read as the probability of
each level's digit) about the sample fields it names (metrics/custom.py). The data first, then the user's question,
then the reply line; the family is `criterion:NAME` / `rubric:NAME`, so a calibration map can cover a criterion."""
from __future__ import annotations

from ..data.language import detect
from .base import ONE_WORD, SYSTEMS, YES_NO_SYSTEMS, Prompt, closing, contexts_block, tagged

FIELDS = ("question", "answer", "contexts", "reference")  # the sample fields a criterion may show the judge

LEVEL_SYSTEMS = {
    "en": SYSTEMS["en"].replace("Reply with JSON only.", "Reply with one digit: the level you choose."),
    "zh": SYSTEMS["zh"].replace("只用 JSON 回复。", "只用一个数字回复：你选择的等级。"),
}
_LEVELS = {"en": "The levels:", "zh": "等级："}


def _level_line(lang: str, levels: list[int]) -> str:
    shown = ", ".join(map(str, levels))
    if lang == "zh":
        return f"只用一个数字回答：等级（{shown} 之一）。"
    return f"Answer with one digit: the level ({shown})."


def _data(shown: dict[str, "str | list[str]"], lang: str) -> str:
    """The named fields, in FIELDS order: the contexts numbered, the others tagged."""
    parts = []
    for name in FIELDS:
        if name not in shown:
            continue
        value = shown[name]
        parts.append(contexts_block(list(value), lang) if name == "contexts" else tagged(name, str(value)))
    return "\n".join(parts)


def _lang(shown: dict[str, "str | list[str]"], lang: str | None) -> str:
    return lang or detect(" ".join(v if isinstance(v, str) else " ".join(v) for v in shown.values()))


def criterion_prompt(name: str, question: str, shown: dict[str, "str | list[str]"], lang: str | None = None) -> Prompt:
    """The criterion's yes/no question about the fields `shown` (field -> value); one word back."""
    lang = _lang(shown, lang)
    user = "\n".join([_data(shown, lang), "", question.strip(), "", closing(lang, ONE_WORD[lang])])
    return Prompt(f"criterion:{name}", user, YES_NO_SYSTEMS[lang])


def rubric_prompt(name: str, question: str, levels: dict[int, str], shown: dict[str, "str | list[str]"],
                  lang: str | None = None) -> Prompt:
    """The rubric's question and its levels (digit: description) about the fields `shown`; one digit back."""
    lang = _lang(shown, lang)
    listed = "\n".join(f"{k}: {v.strip()}" for k, v in levels.items())
    user = "\n".join([_data(shown, lang), "", question.strip(), _LEVELS[lang], listed, "",
                      closing(lang, _level_line(lang, list(levels)))])
    return Prompt(f"rubric:{name}", user, LEVEL_SYSTEMS[lang])
