"""Synthetic unsupported statements made offline from a supported one and its contexts (issue 37, FactCC-style).

Training rows only: a head may learn from them, no figure is ever computed on them. Each is one small edit of a
statement people judged supported, so the pair differs by the one fact the edit changed. Rules, tried in this order
(the first that applies wins; deterministic for a given statement and contexts):

- number swap: a number in the statement replaced by another number of the contexts (or the number + 3);
- entity swap: a capitalised name in the statement replaced by another name of the contexts not in the statement;
- negation: the first auxiliary verb negated ("is" -> "is not") or a "not"/"n't" removed;
- unsupported addition: a clause naming a place and a year the contexts do not contain.
"""
from __future__ import annotations

import hashlib
import re

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
AUX = re.compile(r"\b(is|are|was|were|has|have|had|will|would|can|could|should|does|did|do)\b")
NEGATED = re.compile(r"\b(not|n't)\b ?")
STOP = {"The", "A", "An", "He", "She", "It", "They", "We", "I", "This", "That", "These", "Those", "In", "On", "At",
        "But", "And", "Or", "If", "When", "While", "After", "Before", "His", "Her", "Their", "Its", "There", "As",
        "For", "With", "By", "From", "To", "Of", "Mr", "Mrs", "Ms", "Dr", "So", "Yes", "No", "You", "Your", "My"}
PLACES = ["Lisbon", "Nairobi", "Manitoba", "Osaka", "Tbilisi", "Valparaiso", "Tasmania", "Leipzig"]


def _pick(options: list[str], key: str) -> str:
    """A deterministic choice among `options` for this statement."""
    return options[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(options)]


def perturb(statement: str, contexts: list[str]) -> tuple[str, str] | None:
    """(the edited statement, the rule's name), or None when the statement is empty."""
    s = statement.strip()
    if not s:
        return None
    ctx = " ".join(contexts)
    nums = NUMBER.findall(s)
    if nums:
        old = nums[0]
        others = sorted({n for n in NUMBER.findall(ctx) if n != old and n not in nums})
        new = _pick(others, s) if others else str(int(float(old.replace(",", ""))) + 3)
        return re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", new, s, count=1), "number"
    names = [n for n in NAME.findall(s) if n not in STOP and s.find(n) > 0 or (n not in STOP and len(n) > 3)]
    if names:
        old = names[0]
        others = sorted({n for n in NAME.findall(ctx) if n not in STOP and n not in s and n.split()[0] not in old
                         and len(n) > 3})
        if others:
            return s.replace(old, _pick(others, s), 1), "entity"
    if NEGATED.search(s):
        return NEGATED.sub("", s, count=1), "negation"
    m = AUX.search(s)
    if m:
        return s[:m.end()] + " not" + s[m.end():], "negation"
    place = _pick([p for p in PLACES if p not in ctx] or PLACES, s)
    year = str(1960 + int(hashlib.sha256(s.encode()).hexdigest(), 16) % 60)
    end = s.rstrip(".!?")
    return f"{end} in {place} in {year}{s[len(end):] or '.'}", "addition"
