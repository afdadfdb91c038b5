"""Which language each prompt is written in: English or Simplified Chinese, chosen per sample from its script.

- A sample's language is the script of its answer (of its question when the answer has no letters): "zh" when at
  least 30% of its units are Chinese (a unit: two CJK characters, about one Chinese word, or one word in another
  script), else "en". So "Java是面向对象的语言，由Sun公司开发" is Chinese, "What does 面向对象 mean?" English.
  `Sample.language` ("en" or "zh", or `--language` / `evaluate(language=...)` for every sample) overrides it.
- Every prompt of a sample is written in that language, except claim and entity extraction: a text is split into
  claims in its own language (the answer's claims in the answer's language, the reference's in the reference's),
  unless the language was given; and questions generated for answer relevancy are written in the question's
  language, so that they are compared with the question in one language.

A sample's scoring context (localragas.scoring) holds its Scope; the judge-call layer (localragas.asking) passes
the language to each prompt builder (`lang=`). A prompt built without one takes the language of its own text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import ConfigError

if TYPE_CHECKING:
    from .schema import Sample

LANGUAGES = ("en", "zh")
SETTINGS = ("auto", *LANGUAGES)
NAMES = {"en": "English", "zh": "Chinese"}
ZH_SHARE = 0.3  # share of Chinese among a text's units from which it counts as Chinese
CJK_PER_WORD = 2  # CJK characters that count as one word

# CJK Unified Ideographs (+ extension A, compatibility ideographs); kana and hangul are not Chinese.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")  # a run of letters of any other script


def cjk_share(text: str) -> float | None:
    """Chinese words (CJK characters / 2) / all words; None when the text has no letters."""
    cjk = len(_CJK.findall(text)) / CJK_PER_WORD
    words = len(_WORD.findall(text))
    return None if cjk + words == 0 else cjk / (cjk + words)


def detect(text: str, default: str = "en") -> str:
    """'zh' or 'en' from the script of `text`; `default` for a text without letters."""
    share = cjk_share(text or "")
    if share is None:
        return default
    return "zh" if share >= ZH_SHARE else "en"


def check_language(value: str | None, *, allow_auto: bool = True) -> str:
    """A valid language setting ('auto', 'en', 'zh'); None is 'auto'."""
    value = "auto" if value is None else str(value).strip().lower()
    valid = SETTINGS if allow_auto else LANGUAGES
    if value not in valid:
        raise ConfigError(f"language must be one of {', '.join(valid)}, got {value!r}")
    return value


@dataclass(frozen=True)
class Scope:
    """The languages chosen for one sample."""

    lang: str  # the sample's prompts
    forced: bool  # given (Sample.language / --language): claims and generated questions use it too
    question: str  # the question's language: questions generated for answer relevancy are written in it

    def text_language(self, text: str) -> str:
        """The language a text is split into claims or entities in: its own, unless the sample's language was given."""
        return self.lang if self.forced else detect(text, default=self.lang)


def scope_of(sample: "Sample") -> Scope:
    if sample.language:
        return Scope(sample.language, True, sample.language)
    question = detect(sample.question)
    return Scope(detect(sample.answer, default=question), False, question)
