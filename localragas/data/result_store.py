"""Results on disk: a report's samples as a sequence read back one at a time, for runs too large to hold in memory.

A SampleStore writes each SampleResult as one JSON line to a temporary file (in the state folder, .localragas/tmp/
unless $LOCALRAGAS_STATE_DIR moves it) and keeps only the byte offset of each line, by its position in the run (8
bytes a sample): results may arrive in any order (threads, workers) and are read back in the run's order. The file is
removed when the store is closed or garbage collected (on POSIX it is unlinked at once, so a killed process leaves
nothing behind). Report.samples takes a store as it is (data/schema.py SampleSequence): len, iteration, indexing and
slicing read results from the file; a list of them is never built unless asked for (list(store)).
"""
from __future__ import annotations

import os
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, overload

import numpy as np

from ..core import paths
from .schema import SampleResult, SampleSequence

# A run of more samples keeps its results on disk (~14 KB a sample in memory otherwise, run/results.py), and a JSON
# Lines input of more is read back from its file as it is used (~2.6 KB a sample otherwise, data/lazy_samples.py).
SPILL_AFTER = 20_000


def temp_folder() -> Path:
    """Where stores put their files: tmp/ in the state folder."""
    return paths.temp_dir()


class SampleStore(SampleSequence):
    """A sequence of SampleResult on disk. put(i, result) places a result at position i (any order, each once);
    append(result) places it after the last position; seal() fixes the sequence as the positions filled, in order
    (a position never filled is left out, as a run that stopped leaves its unscored samples out)."""

    def __init__(self, size: int = 0, folder: str | Path | None = None):
        where = Path(folder) if folder is not None else temp_folder()
        where.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="results-", suffix=".jsonl", dir=where)
        self.path = Path(name)
        self._file: BinaryIO = os.fdopen(fd, "w+b")
        if os.name == "posix":  # the open file stays readable; nothing is left behind by a kill
            self.path.unlink()
        self._closer = weakref.finalize(self, _close, self._file, self.path)
        self._offsets = np.full(max(size, 16), -1, dtype=np.int64)  # position -> byte offset of its line; -1: none
        self._end = 0  # bytes written
        self._size = 0  # positions up to the last one filled
        self._order: np.ndarray | None = None  # once sealed: the offsets of the filled positions, in order
        self._lock = threading.Lock()

    # --- writing ---------------------------------------------------------------------------------------------------

    def put(self, i: int, result: SampleResult) -> None:
        if self._order is not None:
            raise ValueError("a sealed SampleStore takes no more results")
        line = result.model_dump_json().encode("utf-8") + b"\n"
        with self._lock:
            if i >= len(self._offsets):
                grown = np.full(max(i + 1, 2 * len(self._offsets)), -1, dtype=np.int64)
                grown[:len(self._offsets)] = self._offsets
                self._offsets = grown
            self._file.seek(self._end)
            self._file.write(line)
            self._offsets[i] = self._end
            self._end += len(line)
            self._size = max(self._size, i + 1)

    def append(self, result: SampleResult) -> None:
        self.put(self._size, result)

    def extend(self, results: Iterable[SampleResult]) -> None:
        for result in results:
            self.append(result)

    def seal(self) -> "SampleStore":
        """The sequence from here on: the filled positions, in order; no more results."""
        if self._order is None:
            filled = self._offsets[:self._size]
            self._order = filled[filled >= 0].copy()
            self._offsets = np.empty(0, dtype=np.int64)
            self._file.flush()
        return self

    # --- reading ---------------------------------------------------------------------------------------------------

    def _sealed(self) -> np.ndarray:
        return self.seal()._order  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._sealed())

    def _read(self, offset: int) -> SampleResult:
        with self._lock:
            self._file.seek(int(offset))
            line = self._file.readline()
        return SampleResult.model_validate_json(line)

    @overload
    def __getitem__(self, i: int) -> SampleResult: ...

    @overload
    def __getitem__(self, i: slice) -> list[SampleResult]: ...

    def __getitem__(self, i):
        order = self._sealed()
        if isinstance(i, slice):
            return [self._read(o) for o in order[i]]
        return self._read(order[i])  # an IndexError past the end, as a list's

    def __iter__(self) -> Iterator[SampleResult]:
        for offset in self._sealed():
            with self._lock:
                if self._file.tell() != offset:  # lines written in order are read on without a seek
                    self._file.seek(int(offset))
                line = self._file.readline()
            yield SampleResult.model_validate_json(line)

    def __repr__(self) -> str:
        return f"<SampleStore of {len(self)} results at {self.path}>"

    def __copy__(self) -> "SampleStore":
        return self  # sealed results do not change: a copied report shares them

    def __deepcopy__(self, memo: dict) -> "SampleStore":
        return self

    def close(self) -> None:
        """Remove the file now (the store is empty from here on)."""
        self._closer()
        self._order = np.empty(0, dtype=np.int64)


def _close(f: BinaryIO, path: Path) -> None:
    f.close()
    path.unlink(missing_ok=True)
