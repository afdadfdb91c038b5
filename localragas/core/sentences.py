"""Sentences of a text, split locally (English and Chinese punctuation): the RAGAS paper's unit for context recall,
asked of no judge.

A sentence ends:
- at . ! ? (after optional closing quotes or brackets) followed by whitespace and a character that is not a lower-case
  letter ("e.g. this", "3.5", `"Can I?", he asked` and `"Can I?" he asked` run on);
- at 。！？ (and their closing quotes), with no space needed after: Chinese text has none; also at an ASCII ! or ? directly
  before Chinese, Japanese or Korean text;
- at a line break, always.
A period does not end one after an initial or a dotted acronym ("Joe R. Lansdale", "J. K. Rowling", "U.S. Army"), after
a title or other abbreviation in _ABBREVIATIONS ("Mr. Mole", "St. Louis", "e.g. Paris"), or after one in
_BEFORE_NUMBER when a digit follows ("No. 10", "Jan. 5"; "No. A bucket ..." is two sentences) -- unless the next word
is a common sentence opener (_OPENERS: "He moved to the U.S. The next year ..." is two sentences), or the single
letter is a label after a word in _LABELS rather than an initial ("Option C. Costs more." is two). Lower-case
abbreviations not listed end a sentence before a capital as any word does ("at 5 p.m. Tomorrow works." is two).
"""
from __future__ import annotations

import re

# Rules, not a trained splitter (no nltk punkt or the like): localragas installs and runs offline, few dependencies.
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"  # kana, CJK ideographs, Hangul
_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^a-z\s])"  # . ! ? then whitespace, and no lower-case letter next
                  r"|(?<=[。！？])[”’」』）]*"  # full-width: Chinese puts no space after
                  rf"|(?<=[!?])[\"'”’)\]」』）]*(?=[{_CJK}])"  # ASCII ! ? directly before Chinese text
                  r"|\n\s*")
# Case-sensitive. Titles before a name and a few that never end a sentence in practice. Left out on purpose, as they
# often do end one: Jr, Sr (after a name), Inc, Ltd, Corp, Co, etc.
_ABBREVIATIONS = frozenset("Mr Mrs Ms Dr Prof St Gen Col Lt Sgt Capt Rev Hon Gov Sen Rep Pres Mt Ft Vol Fig vs "
                           "e.g i.e".split())
# Not an end only before a digit ("No. 10", "p. 5", "Jan. 5"): "No." is also a one-word answer, "in Jan." may end one.
_BEFORE_NUMBER = frozenset("No Nos p pp Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split())
# Words that start a sentence but hardly a name, so an initial or acronym before one ends its sentence: "U.S. Army" is
# one sentence, "moved to the U.S. The next year" two. No single letters: "J. A. Smith" is a name.
_OPENERS = frozenset("The This That These Those There Then It Its He His She Her They Their We Our You Your But And So "
                     "In On At As After When However".split())
# Words a single capital letter follows as a label, not as an initial ("option C.", "Plan B.", "Appendix A.",
# "vitamin C."): the period after the letter ends a sentence as after any word. Compared in lower case.
_LABELS = frozenset("option options plan appendix annex part section chapter type class grade group level tier phase "
                    "step stage model version exhibit figure table schedule vitamin hepatitis".split())
_WORD_BEFORE = re.compile(r"(\w+)\s+$")
_NOT_IN_WORD = re.compile(r"[^\w.]")  # the word before a period keeps its own dots: "Mr", "R", "U.S", "e.g"
_WORD = re.compile(r"\w+")
_WORDLIKE = re.compile(r"\w", re.UNICODE)
MIN_CHARS = 3  # shorter fragments ("1.", "—") are not statements


def sentences(text: str) -> list[str]:
    """The text's sentences in order, stripped; fragments without a word character or under MIN_CHARS dropped;
    repeats dropped."""
    out: dict[str, None] = {}
    start = 0
    for m in _END.finditer(text):
        if m.end() > start and not runs_on(text, m):
            _add(out, text[start:m.end()])
            start = m.end()
    _add(out, text[start:])
    return list(out)


def runs_on(text: str, m: re.Match[str]) -> bool:
    """Whether the period before the break `m` (a match of whitespace or a line break after an end mark) is an
    abbreviation's or an initial's, its sentence going on. judge_calls/text.py's size cutter asks it too."""
    dot = m.start() - 1
    if "\n" in m.group() or text[dot] != ".":
        return False
    word = _NOT_IN_WORD.split(text[max(0, dot - 12):dot])[-1]  # 12 > any listed word, so a longer one cut matches none
    after = _WORD.match(text, m.end())
    if after and after.group() in _OPENERS:
        return False
    if word in _BEFORE_NUMBER:
        return m.end() < len(text) and text[m.end()].isdigit()
    if word in _ABBREVIATIONS:
        return True
    last = word.rpartition(".")[2]  # "S" of "U.S"
    if len(last) != 1 or not last.isupper():
        return False
    if word == last:  # a lone letter: an initial, unless a label word comes before it ("Option C.")
        before = _WORD_BEFORE.search(text, max(0, dot - 1 - 24), dot - 1)
        return not (before and before.group(1).lower() in _LABELS)
    return True


def _add(out: dict[str, None], piece: str) -> None:
    piece = piece.strip()
    if len(piece) >= MIN_CHARS and _WORDLIKE.search(piece):
        out[piece] = None
