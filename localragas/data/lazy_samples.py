"""The samples of a large JSON Lines file, held by where they are in the file and read back when used.

load_samples (data/dataset.py) validates every row of an input in one pass, as always. Past SPILL_AFTER samples of a
.jsonl/.ndjson file it keeps, instead of the Sample objects (~2.6 KB each), the byte offset and line of each valid
row (16 bytes a sample) and the few ids it named that a second reading would not give (a repeated question's "-2"):
a LazySamples parses a sample each time it is read. Other inputs (.json, .csv, .parquet, a `datasets` folder, span
files) are held in a list, as before.

The file must not change while the run reads it: its size and modification time are recorded at load and checked at
each read, a change raising a DatasetError naming the file.
"""
from __future__ import annotations

import json
import threading
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..core.errors import DatasetError
from .field_check import SampleList
from .result_store import SPILL_AFTER
from .sample_record import content_id, sample_from_dict
from .schema import Sample

__all__ = ["SPILL_AFTER", "LazySamples", "RowIndex"]


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class RowIndex:
    """Where each valid row of one JSON Lines file is (offset of its text, its line), filled by load_samples, and how
    to read one back as the Sample the load made of it."""

    def __init__(self, path: Path, shown: str, columns: Mapping[str, str] | None):
        self.path, self.shown, self.columns = path, shown, dict(columns) if columns else None
        self.offsets, self.lines = array("q"), array("q")
        self.named: dict[int, str] = {}  # row -> an id SampleIds named that content_id alone would not give
        self.stamp: tuple[int, int] | None = None
        self._file: BinaryIO | None = None
        self._lock = threading.Lock()

    def add(self, offset: int, line: int, given_id: str | None, sample: Sample) -> None:
        """One valid row: `sample` as SampleIds claimed it, `given_id` the id the row itself gave (None: named)."""
        if given_id is None and sample.id != content_id(sample.question):
            self.named[len(self.offsets)] = str(sample.id)
        self.offsets.append(offset)
        self.lines.append(line)

    def seal(self) -> None:
        """The pass is over: the file as it is now is the one read back."""
        self.stamp = _stamp(self.path)

    def __len__(self) -> int:
        return len(self.offsets)

    def read(self, row: int) -> Sample:
        if _stamp(self.path) != self.stamp:
            raise DatasetError(self.shown, None, None, "the file changed while the run was reading it (its size or "
                                                       "modification time differ from when it was loaded): leave the "
                                                       "data file as it is during a run, and run again")
        line = self.lines[row]
        with self._lock:
            if self._file is None:
                self._file = open(self.path, "rb")  # noqa: SIM115 - kept open for the reads, closed with the index
            self._file.seek(self.offsets[row])
            raw = self._file.readline()
        try:
            record = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            raise DatasetError(self.shown, line, None, "the row no longer reads as it did when the file was loaded: "
                                                       "leave the data file as it is during a run") from None
        sample = sample_from_dict(record, path=self.shown, line=line, columns=self.columns)
        if sample.id is None:
            sample = sample.model_copy(update={"id": self.named.get(row) or content_id(sample.question)})
        return sample

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_file": None, "_lock": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


class LazySamples(Sequence[Sample]):
    """A SampleList read from its file as it is used: len, iteration, an index, a slice (--limit), part()/at() (a
    shard), with `ignored`, `source` and `whole` as a SampleList has them. `language`: the run's language override,
    set on each sample read (evaluate()'s --language)."""

    def __init__(self, index: RowIndex, rows: Sequence[int], ignored: Iterable[str] = (), source: str = "samples",
                 whole: "SampleList | LazySamples | None" = None, language: str | None = None):
        self._index, self._rows = index, rows
        self.ignored, self.source, self.whole, self.language = list(ignored), source, whole, language

    def _one(self, row: int) -> Sample:
        sample = self._index.read(row)
        return sample if self.language is None else sample.model_copy(update={"language": self.language})

    def _with(self, rows: Sequence[int], whole: Any, language: str | None) -> "LazySamples":
        return LazySamples(self._index, rows, self.ignored, self.source, whole, language)

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):  # a slice (the first N, --limit) is a LazySamples of the same input
        if isinstance(i, slice):
            return self._with(self._rows[i], self.whole, self.language)
        return self._one(self._rows[i])

    def __iter__(self) -> Iterator[Sample]:
        for row in self._rows:
            yield self._one(row)

    def __repr__(self) -> str:
        return f"LazySamples({self.source!r}, {len(self)} samples)"

    def at(self, positions: Iterable[int]) -> "LazySamples":
        """The samples at these positions (a shard), as a part of this input: their rows, nothing read."""
        rows = array("q", (self._rows[p] for p in positions))
        return self._with(rows, self.whole if self.whole is not None else self, self.language)

    def part(self, samples: Iterable[Sample]) -> SampleList:
        """Some of these samples given as Samples, as a part of this input (a list: at() keeps them on file)."""
        return SampleList(samples, self.ignored, self.source, self.whole if self.whole is not None else self)

    def with_language(self, language: str) -> "LazySamples":
        """These samples with `language` set on each, as they are read."""
        return self._with(self._rows, self.whole, language)


def held(index: RowIndex, ignored: Iterable[str], source: str) -> LazySamples:
    """The samples of a file load_samples indexed, read back as they are used."""
    index.seal()
    return LazySamples(index, range(len(index)), ignored, source)
