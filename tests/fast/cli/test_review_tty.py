"""`localragas review` on a real terminal (a pseudo-terminal): one key is a verdict, no Enter needed; a note is typed
as a line; the terminal's mode is given back as it was when the review ends."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import reviewable_run

termios = pytest.importorskip("termios")
pty = pytest.importorskip("pty")

ROOT = Path(__file__).resolve().parents[3]


class Screen:
    """What the child wrote to the terminal so far; `wait(text)` reads on until `text` appears after what earlier
    waits consumed (or fails after `seconds`, showing the end of the screen)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.text, self.seen = fd, b"", 0

    def wait(self, text: bytes, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.text[self.seen:]:
            left = deadline - time.monotonic()
            assert left > 0, self.text.decode(errors="replace")[-2000:]
            if select.select([self.fd], [], [], min(left, 1.0))[0]:
                try:
                    self.text += os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    assert text in self.text[self.seen:], self.text.decode(errors="replace")[-2000:]
        self.seen = self.text.index(text, self.seen) + len(text)


def test_keys_without_enter_a_note_as_a_line_and_the_terminal_mode_given_back(tmp_path):
    run = reviewable_run(tmp_path)
    labels = tmp_path / "l.jsonl"
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen([sys.executable, "-m", "localragas", "review", str(run), "--n", "2", "--labels",
                             str(labels), "--reviewer", "tty"], stdin=slave, stdout=slave, stderr=slave,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}, close_fds=True)
    screen = Screen(master)
    try:
        screen.wait(b"[y/n/s/c/f/b/q] 1/")
        os.write(master, b"y")  # no Enter
        screen.wait(b"saved: supported")
        screen.wait(b"> ")
        os.write(master, b"c")
        screen.wait(b"note (Enter ends it)")
        os.write(master, b"a typed note\n")
        screen.wait(b"note kept")
        os.write(master, b"n")
        screen.wait(b"saved: ")
        screen.wait(b"> ")
        os.write(master, b"q")
        screen.wait(b"stopped: 2 of")
        assert proc.wait(timeout=120) == 0, screen.text.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
        after = termios.tcgetattr(slave)
        os.close(master)
        os.close(slave)
    got = [json.loads(x) for x in labels.read_text(encoding="utf-8").splitlines()]
    assert [(x["label"], x["note"]) for x in got] == [(1, ""), (0, "a typed note")]
    assert after[3] & termios.ICANON and after[3] & termios.ECHO  # line mode and echo are back
    assert after[3] == before[3]
