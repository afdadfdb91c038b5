"""`localragas review` in the terminal (works over ssh; no curses): one item at a time, as report/review_view.py
shows it, and one key a verdict. Keys are read one at a time when stdin is a terminal (cbreak mode, restored on every
way out), else a line at a time (the first character of each line is the key; a note is the next line), so a script
can drive it.

Keys: y supported (relevant) · n not · s skip · c a note on this item, then its key · f the contexts in full ·
b back to the previous item (its new label replaces the old) · ? the keys · q quit. Every label is in the labels
file the moment it is given (quality/review_session.py); quitting loses nothing.
"""
from __future__ import annotations

import os
import shutil
import textwrap
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

import click

from ..core.printable import printable
from ..quality.review_draw import Shown
from ..quality.review_session import ReviewSession, Verdict
from ..report.review_view import ItemView, Passage, excerpt

LONG = 1500  # a context longer than this is shown first around the part that best matches the item
AROUND = 700  # how much of it: about this many characters
KEYS = {"y": 1, "n": 0, "s": None}
_OPEN, _CLOSE = "\ue000", "\ue001"  # where a mark starts and ends while a text is wrapped (stripped from the data)


class LineKeys:
    """Keys from a stream a line at a time: a line's first non-blank character is the key (blank lines are
    ignored); the end of the input is q."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def key(self) -> str:
        while True:
            line = self.stream.readline()
            if not line:
                return "q"
            if line.strip():
                return line.strip()[0].lower()

    def line(self) -> str:
        return self.stream.readline().rstrip("\n")


class TerminalKeys:
    """Keys from a terminal one at a time (cbreak: no Enter needed; Ctrl-C still interrupts); a note is read as a
    line in the terminal's own mode (`cooked`: the mode it had before), with its line editing."""

    def __init__(self, fd: int, cooked: list) -> None:
        self.fd, self.cooked = fd, cooked

    def key(self) -> str:
        data = os.read(self.fd, 1)
        if not data or data in (b"\x04", b"\x03"):  # end of input, or Ctrl-C seen as a character
            return "q"
        return data.decode("utf-8", "replace").lower()

    def line(self) -> str:
        import termios  # noqa: PLC0415 - POSIX only, as this class

        cbreak = termios.tcgetattr(self.fd)
        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.cooked)
        try:
            data = b""
            while not data.endswith(b"\n"):  # in line mode a read returns at Enter, with the line as edited
                chunk = os.read(self.fd, 1024)
                if not chunk:
                    break
                data += chunk
            return data.decode("utf-8", "replace").rstrip("\r\n")
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, cbreak)


@contextmanager
def keys_from(stream: TextIO) -> Iterator[LineKeys | TerminalKeys]:
    """The key reader for stdin: one key at a time on a POSIX terminal (its mode restored on the way out, whatever
    ends the review), else a line at a time."""
    try:
        import termios  # noqa: PLC0415 - POSIX only
        import tty  # noqa: PLC0415

        fd = stream.fileno()
        terminal = stream.isatty()
    except (ImportError, OSError, ValueError, AttributeError):
        terminal = False
    if not terminal:
        yield LineKeys(stream)
        return
    cooked = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield TerminalKeys(fd, cooked)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, cooked)


def _marked(text: str, marks: tuple[tuple[int, int], ...]) -> str:
    """The text printable (control characters escaped, line breaks kept) with each mark between _OPEN and _CLOSE."""
    text = text.replace(_OPEN, "").replace(_CLOSE, "") if (_OPEN in text or _CLOSE in text) else text
    out, at = [], 0
    for start, end in sorted(marks):
        if start < at:
            continue
        out += [printable(text[at:start], newlines=True), _OPEN, printable(text[start:end], newlines=True), _CLOSE]
        at = end
    out.append(printable(text[at:], newlines=True))
    return "".join(out)


def _wrapped(text: str, width: int, style: tuple[str, str]) -> list[str]:
    """The text wrapped to `width` under a 4-space indent, paragraph by paragraph; marks drawn with style (start,
    end), closed at each line's end and opened again on the next, so a highlight never runs into the margin."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, width - 4, break_on_hyphens=False) or [""])
    out, inside = [], False
    for line in lines:
        body = (_OPEN if inside else "") + line
        opened, closed = line.rfind(_OPEN), line.rfind(_CLOSE)
        if opened != closed:  # the line's last mark says whether one runs on into the next line
            inside = opened > closed
        out.append("    " + (body + _CLOSE if inside else body).replace(_OPEN, style[0]).replace(_CLOSE, style[1]))
    return out


def _passage(p: Passage, full: bool, width: int, color: bool) -> list[str]:
    title, text, marks = p.title, p.text, p.marks
    if p.role == "context" and not full and len(text) > LONG:
        start, end = excerpt(text, marks[0] if marks else None, AROUND)
        where = "around the part that best matches the item" if marks else "from its start"
        title += f" (showing {end - start:,} of {len(text):,} characters {where}; f: all of it)"
        marks = tuple((max(a, start) - start, min(b, end) - start) for a, b in marks if a < end and b > start)
        text = ("… " if start else "") + text[start:end] + (" …" if end < len(text) else "")
        marks = tuple((a + (2 if start else 0), b + (2 if start else 0)) for a, b in marks)
    style = ("\x1b[7m", "\x1b[27m") if color else ("»", "«")
    return [click.style(printable(title), bold=True) if color else printable(title),
            *_wrapped(_marked(text, marks), width, style)]


def item_lines(view: ItemView, position: str, *, full: bool = False, show_judge: bool = False,
               width: int = 100, color: bool = False) -> list[str]:
    """The item as the terminal shows it: a heading with the position ("12/50"), each passage (marks in reverse
    video with color, else between » and «), the judge's verdict with show_judge, and the question."""
    rule = f"── {position} · {printable(view.heading)} "
    lines = ["", rule + "─" * max(0, width - len(rule))]
    for p in view.passages:
        lines += _passage(p, full, width, color)
    if show_judge:
        lines.append(f"Judge: {printable(view.judge)}")
    lines += textwrap.wrap(printable(view.ask), width)
    return lines


def legend(view: ItemView | None = None) -> str:
    yes, no = (view.yes, view.no) if view else ("supported / relevant", "not")
    return (f"keys: y {yes} · n {no} · s skip · c note, then y/n/s · f contexts in full · b back · ? keys · "
            "q quit (every label is saved as it is given)")


def review_in_terminal(session: ReviewSession, view_of: Callable[[Shown], ItemView], keys: LineKeys | TerminalKeys,
                       *, show_judge: bool = False, color: bool = False) -> int:
    """Show the items not yet labelled one at a time, in review order, and record each key's label; b goes back to
    the item before (labelled or not). Returns how many labels were given in this sitting. Stops at q (or the end
    of the input, or Ctrl-C), every label given so far already in the file."""
    width = max(40, min(110, shutil.get_terminal_size((100, 24)).columns))
    given = 0
    at = session.next_open(-1)
    click.echo(legend())
    try:
        while at != -1:
            shown = session.items[at]
            view = view_of(shown)
            position = f"{at + 1}/{session.total}"
            click.echo("\n".join(item_lines(view, position, show_judge=show_judge, width=width, color=color)))
            before = session.done.get(shown.item.key)
            if before is not None:
                click.echo(f"(labelled {_word(view, before.label)} before; a new label replaces it)")
            note, step = "", None
            while step is None:
                click.echo(f"[y/n/s/c/f/b/q] {position} > ", nl=False)
                key = keys.key()
                click.echo(key if isinstance(keys, TerminalKeys) else "")
                if key in KEYS:
                    verdict: Verdict = KEYS[key]  # type: ignore[assignment]
                    session.record(shown, verdict, note)
                    given += 1
                    click.echo(f"saved: {_word(view, verdict)}{' (with a note)' if note else ''} · "
                               f"{len(session.done)} of {session.total} done")
                    step = session.next_open(at)
                elif key == "c":
                    click.echo("note (Enter ends it): ", nl=False)
                    note = keys.line().strip()
                    click.echo(f"note kept ({len(note)} characters); now y / n / s" if note else "no note")
                elif key == "f":
                    click.echo("\n".join(item_lines(view, position, full=True, show_judge=show_judge, width=width,
                                                    color=color)))
                elif key == "b":
                    if at == 0:
                        click.echo("this is the first item")
                    else:
                        step = at - 1
                elif key == "q":
                    return _stopped(session, given)
                elif key == "?":
                    click.echo(legend(view))
                else:
                    click.echo(f"unknown key {printable(key)!r}: {legend(view)}")
            at = step
    except KeyboardInterrupt:
        click.echo("")
        return _stopped(session, given)
    click.echo(f"\nall {session.total} items done ({given} in this sitting); labels in {printable(session.path)}")
    return given


def _word(view: ItemView, verdict: Verdict) -> str:
    return {1: view.yes, 0: view.no, None: "skipped"}[verdict]


def _stopped(session: ReviewSession, given: int) -> int:
    click.echo(f"stopped: {len(session.done)} of {session.total} done ({given} in this sitting), saved in "
               f"{printable(session.path)}; run the same command again to go on")
    return given
