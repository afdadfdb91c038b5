"""Progress of a run: a live bar with samples/s and ETA on a terminal, plain lines in CI logs."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from .printable import printable


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Use as a context manager; call advance() once per finished sample."""

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None, every_seconds: float = 10.0):
        self.total, self.enabled = total, enabled
        self.stream = stream or sys.stderr
        self.every = every_seconds
        self.done = 0
        self._bar = None
        self._task = None
        self._start = self._last = 0.0

    def __enter__(self) -> "Progress":
        self._start = self._last = time.perf_counter()
        if self.enabled and self.stream.isatty():
            from rich.console import Console  # noqa: PLC0415
            from rich.progress import (  # noqa: PLC0415
                BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
            )

            self._bar = Bar(
                TextColumn("[bold]evaluating"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(file=self.stream), transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("eval", total=self.total, rate="")
        return self

    def advance(self, label: str = "") -> None:
        self.done += 1
        now = time.perf_counter()
        rate = self.done / max(now - self._start, 1e-9)
        if self._bar is not None:
            self._bar.update(self._task, advance=1, rate=f"{rate:.2f} samples/s")
        elif self.enabled and (now - self._last >= self.every or self.done in (1, self.total)):
            self._last = now
            eta = (self.total - self.done) / rate if rate > 0 else 0.0
            pct = 100 * self.done / max(self.total, 1)
            print(
                f"localragas: {self.done}/{self.total} samples ({pct:.0f}%) {rate:.2f} samples/s "
                f"elapsed {_clock(now - self._start)} ETA {_clock(eta)} {printable(label)}".rstrip(),
                file=self.stream, flush=True,
            )

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
