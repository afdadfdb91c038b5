"""Which language each prompt is written in: English or Simplified Chinese, chosen per sample from its script.

- A sample's language is the script of its answer (of its question when the answer has no letters): "ja" when it
  has any kana, "ko" when it has any hangul (whichever of the two it has more of), else "zh" when at least 30% of
  its units are Chinese (a unit: two CJK characters, about one Chinese word, or one word in another script), else
  "en". So "Java是面向对象的语言，由Sun公司开发" is Chinese, "What does 面向对象 mean?" English, "東京は日本の首都です"
  Japanese. Japanese and Korean have no prompts of their own: their samples are asked in English (PROMPTS), and the
  language detected is recorded beside the prompts' one (Scope.detected; `detected_language` in the evidence,
  `meta.languages` in the report). `Sample.language` ("en" or "zh", or `--language` / `evaluate(language=...)` for
  every sample) overrides it.
- Every prompt of a sample is written in that language, except claim and entity extraction: a text is split into
  claims in its own language (the answer's claims in the answer's language, the reference's in the reference's),
  unless the language was given; and questions generated for answer relevancy are written in the question's
  language, so that they are compared with the question in one language.

A sample's scoring context (localragas.judge_calls.sample_context) holds its Scope; the judge-call layer
(localragas.judge_calls) passes the language to each prompt builder (`lang=`). A prompt built without one takes the
language of its own text.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..core.number_text import count_text

if TYPE_CHECKING:
    from .schema import Sample

LANGUAGES = ("en", "zh")  # the languages prompts are written in
SETTINGS = ("auto", *LANGUAGES)
NAMES = {"en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean"}
PROMPTS = {"en": "en", "zh": "zh", "ja": "en", "ko": "en"}  # a detected language -> the language of its prompts
ZH_SHARE = 0.3  # share of Chinese among a text's units from which it counts as Chinese
CJK_PER_WORD = 2  # CJK characters that count as one word

# CJK Unified Ideographs (+ extension A, compatibility ideographs); kana and hangul are not Chinese.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")  # a run of letters of any other script
# Hiragana, Katakana (less the middle dot U+30FB, which Chinese uses too), its phonetic extensions, halfwidth Katakana
_KANA = re.compile(r"[\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
# Hangul syllables, Jamo (and extended A and B), compatibility Jamo, halfwidth Hangul
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\u3131-\u318e\uffa0-\uffdc]")


def cjk_share(text: str) -> float | None:
    """Chinese words (CJK characters / 2) / all words; None when the text has no letters."""
    cjk = len(_CJK.findall(text)) / CJK_PER_WORD
    words = len(_WORD.findall(text))
    return None if cjk + words == 0 else cjk / (cjk + words)


def script_language(text: str, default: str = "en") -> str:
    """'ja' (any kana), 'ko' (any hangul), 'zh' or 'en' from the script of `text`; `default` for a text without
    letters."""
    text = text or ""
    kana, hangul = len(_KANA.findall(text)), len(_HANGUL.findall(text))
    if kana or hangul:
        return "ja" if kana >= hangul else "ko"
    share = cjk_share(text)
    if share is None:
        return default
    return "zh" if share >= ZH_SHARE else "en"


def detect(text: str, default: str = "en") -> str:
    """The language of the prompts for `text`: 'zh' or 'en' from its script (Japanese and Korean: 'en', they have no
    prompts of their own); `default` for a text without letters."""
    return PROMPTS[script_language(text, default)]


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
    detected: str = ""  # the language its script says ("ja", "ko", "zh", "en"); its prompts are PROMPTS[detected]

    def __post_init__(self) -> None:
        if not self.detected:
            object.__setattr__(self, "detected", self.lang)

    def text_language(self, text: str) -> str:
        """The language a text is split into claims or entities in: its own, unless the sample's language was given."""
        return self.lang if self.forced else detect(text, default=self.lang)


def scope_of(sample: "Sample") -> Scope:
    if sample.language:
        return Scope(sample.language, True, sample.language)
    question = script_language(sample.question)
    detected = script_language(sample.answer, default=question)
    return Scope(PROMPTS[detected], False, PROMPTS[question], detected)


def prompts_line(languages: dict[str, int]) -> str | None:
    """What the terminal says of a run's languages (detected language -> samples), when there is something to say
    (a language without prompts of its own, or prompts in more than one): "prompts: en for 3 rows (2 ja, 1 ko: no
    prompts of their own), zh for 2"; None for a run all in English or all in Chinese."""
    by_prompts: dict[str, Counter] = {}
    for detected, n in languages.items():
        by_prompts.setdefault(PROMPTS.get(detected, "en"), Counter())[detected] += n
    if len(by_prompts) < 2 and all(d in LANGUAGES for d in languages):
        return None
    parts: list[str] = []
    for lang, counts in sorted(by_prompts.items(), key=lambda kv: (-kv[1].total(), kv[0])):
        n = counts.total()
        part = f"{lang} for " + (count_text(n, "row") if not parts else str(n))
        others = sorted(((k, v) for k, v in counts.items() if k not in LANGUAGES), key=lambda kv: (-kv[1], kv[0]))
        if others:
            part += f" ({', '.join(f'{v} {k}' for k, v in others)}: no prompts of their own)"
        parts.append(part)
    return "prompts: " + ", ".join(parts)
