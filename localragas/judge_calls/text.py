"""Splitting text that is too long for one judge call: at sentence ends (not after an abbreviation or an initial, as
core/sentences.py decides), else at spaces, else anywhere; packing items into groups that fit. Nothing is dropped:
the pieces of a text join back into it."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from ..core.sentences import runs_on
from .window import Window

T = TypeVar("T")
Count = Callable[[str], int]

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*|(?<=[。！？；：])")
_SPACE = re.compile(r"\s+")


def _cut(text: str, pattern: re.Pattern[str], keep: Callable[[str, re.Match[str]], bool] = lambda t, m: False
         ) -> list[str]:
    """Split after each match (except where `keep(text, match)`), keeping every character: "".join(result) == text."""
    out, start = [], 0
    for m in pattern.finditer(text):
        if m.end() > start and not keep(text, m):
            out.append(text[start:m.end()])
            start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _hard_split(text: str, limit: int, count: Count) -> list[str]:
    """Cut anywhere (a run with no sentence end and no space), in windows sized from the text's own ratio."""
    out, start = [], 0
    while start < len(text):
        rest = text[start:]
        size = max(1, int(len(rest) * limit / max(count(rest), 1)))
        while size > 1 and count(rest[:size]) > limit:
            size = max(1, size * 3 // 4)
        out.append(rest[:size])
        start += size
    return out


def split_text(text: str, limit: int, count: Count = len) -> list[str]:
    """Consecutive pieces of `text`, each of at most `limit` (by `count`: characters by default, or tokens),
    cut at sentence ends, else at spaces, else anywhere. "".join(pieces) == text: nothing is dropped."""
    limit = max(1, limit)
    if count(text) <= limit:
        return [text]
    units: list[str] = []
    for sentence in _cut(text, _SENTENCE_END, runs_on):
        if count(sentence) <= limit:
            units.append(sentence)
            continue
        for word in _cut(sentence, _SPACE):
            units.extend([word] if count(word) <= limit else _hard_split(word, limit, count))
    pieces: list[str] = []
    current, size = "", 0
    for unit in units:
        n = count(unit)
        if current and size + n > limit:
            pieces.append(current)
            current, size = "", 0
        current, size = current + unit, size + n
    if current:
        pieces.append(current)
    out: list[str] = []
    for piece in pieces:  # counts of joined units can exceed their sum (tokenizers): check each piece once more
        if count(piece) <= limit or len(piece) < 2:
            out.append(piece)
        else:
            mid = len(piece) // 2
            out.extend(split_text(piece[:mid], limit, count) + split_text(piece[mid:], limit, count))
    return out


def truncate(text: str, limit: int, count: Count) -> str:
    """The beginning of `text` within `limit` (cut at a sentence end or space when it can be), marked with […]."""
    head = split_text(text, max(1, limit - 4), count)[0]
    return head if head == text else head.rstrip() + " […]"


def pack(items: Sequence[T], cost: Callable[[T], int], limit: int) -> list[list[T]]:
    """Consecutive groups of items whose costs sum to at most `limit` (an item costlier than that stands alone)."""
    groups: list[list[T]] = []
    current: list[T] = []
    used = 0
    for item in items:
        c = cost(item)
        if current and used + c > limit:
            groups.append(current)
            current, used = [], 0
        current.append(item)
        used += c
    if current:
        groups.append(current)
    return groups


def context_pieces(contexts: Sequence[str], limit: int, w: Window) -> tuple[list[tuple[int, str]], list[int]]:
    """(original index, text) of every context, a context longer than `limit` tokens split into pieces; and the
    1-based numbers of the split contexts."""
    out: list[tuple[int, str]] = []
    split: list[int] = []
    for i, c in enumerate(contexts):
        if w.tokens(c) <= limit:
            out.append((i, c))
        else:
            parts = split_text(c, limit, w.tokens)
            split.append(i + 1)
            out.extend((i, p) for p in parts)
    return out, split


def number_list(ns: list[int]) -> str:
    return ", ".join(map(str, ns[:10])) + (" …" if len(ns) > 10 else "")

