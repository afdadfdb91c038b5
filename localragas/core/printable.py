"""Text safe to print on a terminal: control characters from data (an id, a category, an error message) are shown as
escapes such as \\x1b, never sent raw, so a dataset cannot retitle, recolour or rewrite the user's terminal."""
from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the bidirectional overrides that reorder what is shown ("Trojan source")
_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # keeps tab and newline


def printable(text: object, newlines: bool = False) -> str:
    """str(text) with every control character escaped (newlines: keep line breaks and tabs)."""
    return (_LINES if newlines else _LINE).sub(
        lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
