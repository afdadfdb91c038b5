"""The console the terminal reports print to: the terminal's width, or 120 columns in CI logs and pipes.

rich falls back to 80 columns when stdout is not a terminal, which wraps metric names and intervals in CI logs.
$COLUMNS still wins when set.
"""
from __future__ import annotations

import os

from rich.console import Console, JustifyMethod
from rich.markup import escape

from ..core.printable import printable

LOG_WIDTH = 120
Columns = list[tuple[str, JustifyMethod]]  # a table's column titles with their alignment


def report_console() -> Console:
    console = Console()
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(width=LOG_WIDTH)
    return console


def console_text(text: object) -> str:
    """Text from data or a stored report (ids, categories, paths, messages) for a rich console: control characters
    escaped (never sent raw to the terminal), rich markup neutralised."""
    return escape(printable(text))
