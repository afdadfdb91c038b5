"""Progress of a run: a live bar with its pace (samples/s, or seconds per sample when slower than one a second) and
ETA on a terminal, plain lines in CI logs."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from ..core.printable import printable


def rate_text(rate: float, unit: str = "samples") -> str:
    """A run's pace as a person reads it: "3.20 samples/s", or below one a second the seconds each takes ("20.0 s per
    sample")."""
    if rate >= 1 or rate <= 0:
        return f"{rate:.2f} {unit}/s"
    return f"{1 / rate:.1f} s per {unit.removesuffix('s')}"


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Use as a context manager; call advance() once per finished sample (or `unit`: `localragas generate` counts
    kept items, "generating")."""

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None, every_seconds: float = 10.0,
                 unit: str = "samples", verb: str = "evaluating"):
        self.total, self.enabled = total, enabled
        self.unit, self.verb = unit, verb
        self.stream = stream or sys.stderr
        self.every = every_seconds
        self.done = 0
        self._bar: Any = None  # a rich progress bar while one is shown (a terminal)
        self._task: Any = None
        self._start = self._last = 0.0

    def __enter__(self) -> "Progress":
        self._start = self._last = time.perf_counter()
        if self.enabled and self.stream.isatty():
            from rich.console import Console  # noqa: PLC0415
            from rich.progress import (  # noqa: PLC0415
                BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
            )

            self._bar = Bar(
                TextColumn(f"[bold]{self.verb}"), BarColumn(), MofNCompleteColumn(),
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
            self._bar.update(self._task, advance=1, rate=rate_text(rate, self.unit))
        elif self.enabled and (now - self._last >= self.every or self.done in (1, self.total)):
            self._last = now
            eta = (self.total - self.done) / rate if rate > 0 else 0.0
            pct = 100 * self.done / max(self.total, 1)
            print(
                f"localragas: {self.done}/{self.total} {self.unit} ({pct:.0f}%) {rate_text(rate, self.unit)} "
                f"elapsed {_clock(now - self._start)} ETA {_clock(eta)} {printable(label)}".rstrip(),
                file=self.stream, flush=True,
            )

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def interactive() -> bool:
    """Running in a notebook (an IPython kernel) or an interactive session (the python or IPython prompt)."""
    ipython = sys.modules.get("IPython")
    if ipython is not None:
        get = getattr(ipython, "get_ipython", None)
        if callable(get) and get() is not None:
            return True
    return hasattr(sys, "ps1") or bool(sys.flags.interactive)


class _Tqdm:
    """Progress as a tqdm bar (tqdm.auto: a widget in Jupyter, text elsewhere); the interface of Progress."""

    def __init__(self, total: int, unit: str = "samples"):
        try:  # a widget in Jupyter needs ipywidgets; without it tqdm.auto warns "IProgress not found" and falls back
            import ipywidgets  # noqa: F401, PLC0415
            from tqdm.auto import tqdm  # noqa: PLC0415
        except ImportError:
            from tqdm import tqdm  # noqa: PLC0415  (text, in a notebook's output too)

        self._bar = tqdm(total=total, desc="localragas", unit=unit.rstrip("s"), leave=True)

    def __enter__(self) -> "_Tqdm":
        return self

    def advance(self, label: str = "") -> None:
        self._bar.update(1)

    def __exit__(self, *exc) -> None:
        self._bar.close()


def progress_for(total: int, enabled: bool | None, unit: str = "samples",
                 verb: str = "evaluating") -> "Progress | _Tqdm":
    """The progress display of a run. enabled None (evaluate()'s default): shown only in a notebook or an interactive
    session, as a tqdm bar when tqdm is installed; True: always (a live bar on a terminal, plain lines in a log);
    False: never."""
    if enabled is None:
        if not interactive():
            return Progress(total, enabled=False, unit=unit, verb=verb)
        try:
            return _Tqdm(total, unit)
        except ImportError:
            return Progress(total, enabled=True, unit=unit, verb=verb)
    return Progress(total, enabled=bool(enabled), unit=unit, verb=verb)
