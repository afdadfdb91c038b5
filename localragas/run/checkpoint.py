"""Resume: each finished sample is appended to a checkpoint as it completes, so a killed run loses nothing.

One JSON line per sample: {"hash": sha256 of the sample, "result": SampleResult}. A result is reused only for a
sample with the same id and the same content. Any other line (cut by a kill, damaged, nested too deeply, longer than
MAX_LINE_BYTES, of an older format) is discarded with a warning, and its sample is judged again. An append that fails
(a full disk) is taken back whole (the file is cut back to where it was), so no part of its line stays. A resumed
run reads the checkpoint once, a line at a time, and keeps only where each finished sample's line is
(Checkpoint.finished, run/finished_index.py): each result is read back from its line when the run takes it, so a
run resumed at 900,000 of 1,000,000 samples never holds 900,000 results.

A run holds its checkpoint (JsonLinesCheckpoint.lock: an exclusive advisory lock on CHECKPOINT.lock, with its pid in
it) while it is live: a second run of the same data and options is refused at once instead of resuming from samples
the first is still writing. The OS drops the lock when a process ends, so a killed run never blocks the next one.
Windows has no fcntl: there two live runs of one checkpoint are not told apart.
"""
from __future__ import annotations

import hashlib
import json
import logging
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from pydantic import ValidationError

from ..core.errors import CheckpointError, environment_message

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (documented in docs/commands.md)
    fcntl = None  # type: ignore[assignment]
from ..data.schema import Sample, SampleResult
from .finished_index import FinishedIndex

log = logging.getLogger("localragas")
MAX_LINE_BYTES = 64 << 20  # a longer line is no result of ours: read past in pieces, never loaded whole
_WARNED_LINES = 5  # discarded lines warned about one by one; the rest are counted in one warning

# Optional fields added after checkpoints existed: left out of the hash while unset, so old hashes stay valid.
_LATER_FIELDS = ("retrieved_context_ids", "reference_context_ids", "language", "turn")


def sample_hash(sample: Sample) -> str:
    unset = {k for k in _LATER_FIELDS if getattr(sample, k, None) is None}
    return hashlib.sha256(sample.model_dump_json(exclude=unset).encode("utf-8")).hexdigest()


def run_key(*parts: object) -> str:
    """A stable name for a run from what decides its results (dataset, metrics, judge fingerprint, embedder, the
    built-in prompts' digest: prompts.digest…)."""
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode("utf-8")).hexdigest()[:20]


class JsonLinesCheckpoint:
    """A checkpoint of one JSON line per finished unit, appended as each finishes; `_entry` reads a line back as
    (key, value) or says why it cannot be used."""

    unit = "sample"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._held: TextIO | None = None  # the open lock file while this object holds the checkpoint

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def lock(self) -> None:
        """Hold the checkpoint for this run until release() or remove(): an exclusive advisory lock (flock) on its
        .lock file, this process's pid written in it. Another run holding it: CheckpointError naming the checkpoint,
        the holder's pid and what to do, at once. Already held by this object, or no fcntl (Windows): nothing."""
        if self._held is not None or fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            f = open(self.lock_path, "a+", encoding="utf-8")
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                holder = f.read(32).strip()
                f.close()
                raise CheckpointError(
                    f"resume checkpoint {self.path} is in use by another live run of the same data and options "
                    f"(pid {holder if holder.isdigit() else 'unknown'}): wait for it to end (the same command then "
                    "resumes what it left), or run this one with --no-resume (or with another $LOCALRAGAS_STATE_DIR)"
                ) from None
            except BaseException:
                f.close()
                raise
            try:  # a run that ended between our open and flock removed the file we hold: lock the one at the path
                held, there = os.fstat(f.fileno()), os.stat(self.lock_path)
                if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino):
                    break
            except FileNotFoundError:
                pass
            f.close()
        with contextlib.suppress(OSError):  # the pid is for the message; the lock is what counts
            f.seek(0)
            f.truncate()
            f.write(f"{os.getpid()}\n")
            f.flush()
        self._held = f

    def release(self) -> None:
        """Let the checkpoint go (it stays, for a later run to resume); the lock file is removed while still held."""
        f, self._held = self._held, None
        if f is not None:
            with contextlib.suppress(OSError):
                self.lock_path.unlink()
            f.close()

    @contextlib.contextmanager
    def held(self) -> Iterator["JsonLinesCheckpoint"]:
        """lock() for the block, released after it unless it was held before (by the run around it)."""
        before = self._held is not None
        self.lock()
        try:
            yield self
        finally:
            if not before:
                self.release()

    def _entries(self) -> dict:
        """key -> value of every usable line (_scan), the last line of a key kept."""
        return {key: value for key, value, _ in self._scan()}

    def _scan(self) -> Iterator[tuple[Any, Any, int]]:
        """(key, value, byte offset of its line) of every usable line, in file order, read one line at a time; any
        other line is discarded with a warning (on the "localragas" logger, once the file is read) naming the file and
        the line. Its folder is made here: an unusable place is found before any judging (OSError, or CheckpointError
        for a checkpoint that is not a file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not self.path.is_file():
            raise CheckpointError(f"resume checkpoint {self.path} is not a file: delete it, or run with --no-resume")
        if not self.path.is_file():
            return
        discarded: list[tuple[int, str]] = []
        with open(self.path, "rb") as f:
            offset = 0
            for number, line in enumerate(_lines(f, MAX_LINE_BYTES), 1):
                start, offset = offset, f.tell()
                if line is not None and not line.strip():
                    continue
                entry = self._entry(line)
                if isinstance(entry, str):
                    discarded.append((number, entry))
                else:
                    yield entry[0], entry[1], start
        self._warn(discarded)

    def _entry(self, line: bytes | None) -> tuple[str, object] | str:
        raise NotImplementedError

    def _warn(self, discarded: list[tuple[int, str]]) -> None:
        unit = self.unit
        for number, why in discarded[:_WARNED_LINES]:
            log.warning("resume checkpoint %s, line %d: %s; the line is discarded and its %s will be judged again",
                        self.path, number, why, unit)
        if len(discarded) > _WARNED_LINES:
            log.warning("resume checkpoint %s: %d more lines discarded (lines %d to %d); their %ss will be judged "
                        "again", self.path, len(discarded) - _WARNED_LINES, discarded[_WARNED_LINES][0],
                        discarded[-1][0], unit)

    def _append(self, record: dict) -> None:
        """One line at the end, on disk (fsync) before this returns. A failed write or fsync (a full disk) cuts the
        file back to where it was, so no part of the line stays, and stops the run: CheckpointError naming the file,
        the problem and what to do; the units appended before stay, for the same command to resume from."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o666)
        try:
            size = os.lseek(fd, 0, os.SEEK_END)
            if size:
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":  # a line cut by a kill: begin a line of our own, not the end of that one
                    data = b"\n" + data
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            except OSError as e:
                with contextlib.suppress(OSError):  # if even this fails, reading discards the cut line
                    os.ftruncate(fd, size)
                e.filename = e.filename or str(self.path)
                raise CheckpointError(
                    f"could not write the resume checkpoint: {environment_message(e)} ($LOCALRAGAS_STATE_DIR moves "
                    f"it; --no-resume runs without one); the {self.unit}s finished before are kept in it: the same "
                    "command goes on from there") from e
        finally:
            os.close(fd)

    def remove(self) -> None:
        """The run is complete: its checkpoint goes, and the lock with it."""
        self.path.unlink(missing_ok=True)
        self.release()


class Checkpoint(JsonLinesCheckpoint):
    """The finished samples of an evaluation."""

    def finished(self) -> "Finished":
        """The finished samples, found by reading the checkpoint once, a line at a time, keeping only where each
        sample's last usable line is (run/finished_index.py); their results are read back as they are taken."""
        index = FinishedIndex()
        for sample_id, (digest, _), offset in self._scan():  # each result checked, then let go
            index.add(sample_id, digest, offset)
        return Finished(self.path, index.seal())

    def load(self) -> dict[str, tuple[str, SampleResult]]:
        """id -> (sample hash, result) of each id's last usable line, in file order: every result in memory at once
        (tests, small checkpoints); a run takes them one at a time (finished)."""
        with self.finished() as done:
            entries = (done.read(offset) for offset in sorted(done.index.offsets.tolist()))
            return {entry[1].id: entry for entry in entries if entry is not None}

    def append(self, digest: str, result: SampleResult) -> None:
        self._append({"hash": digest, "result": result.model_dump(mode="json")})

    def _entry(self, line: bytes | None) -> tuple[str, tuple[str, SampleResult]] | str:
        entry = _entry(line)
        return entry if isinstance(entry, str) else (entry[1].id, entry)


class RecordCheckpoint(JsonLinesCheckpoint):
    """Finished units of other work, each a JSON object under a key: {"key": ..., "record": {...}} a line
    (`localragas generate`: one line per candidate item, kept or dropped)."""

    unit = "item"

    def load(self) -> dict[str, dict]:
        return self._entries()

    def append(self, key: str, record: dict) -> None:
        self._append({"key": key, "record": record})

    def _entry(self, line: bytes | None) -> tuple[str, dict] | str:
        row = _json_line(line)
        if isinstance(row, str):
            return row
        if not isinstance(row, dict) or not isinstance(row.get("key"), str) or not isinstance(row.get("record"), dict):
            return "not a record of this version"
        return row["key"], row["record"]


class Finished:
    """A checkpoint's finished samples (Checkpoint.finished): take(sample_id, digest) reads back the result of a sample
    whose last usable line has that hash, or gives None (not finished, or finished with other content); read from the
    checkpoint file, held open inside `with`."""

    def __init__(self, path: Path, index: FinishedIndex):
        self.path, self.index = path, index
        self._file: BinaryIO | None = None

    def __len__(self) -> int:
        return len(self.index)

    def __enter__(self) -> "Finished":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def take(self, sample_id: str, digest: str) -> SampleResult | None:
        offset = self.index.find(sample_id, digest)
        if offset is None:
            return None
        entry = self.read(offset)
        if entry is None or entry[0] != digest or entry[1].id != sample_id:  # two ids or hashes sharing a digest
            return None
        return entry[1]

    def read(self, offset: int) -> tuple[str, SampleResult] | None:
        """(sample hash, result) of the line at `offset`; None if it no longer reads as one (the file changed)."""
        if self._file is None:
            self._file = open(self.path, "rb")
        if self._file.tell() != offset:  # lines taken in file order are read on without a seek
            self._file.seek(int(offset))
        entry = _entry(next(_lines(self._file, MAX_LINE_BYTES), b""))
        return None if isinstance(entry, str) else entry


def _lines(f: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Each line of a binary file; None for a line longer than `limit` bytes, which is read past in pieces."""
    while line := f.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = f.readline(1 << 20)
        yield None


def _json_line(line: bytes | None) -> Any:
    """A checkpoint line's JSON value, or (a str) why it cannot be read."""
    if line is None:
        return f"longer than {MAX_LINE_BYTES:,} bytes"
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except RecursionError:
        return "nested too deeply"
    except MemoryError:
        return "too large to load"
    except ValueError:
        return "not valid JSON (cut short by a kill, or damaged)"


def _entry(line: bytes | None) -> tuple[str, SampleResult] | str:
    """(sample hash, result) of a checkpoint line, or why it cannot be used."""
    row = _json_line(line)
    if isinstance(row, str):
        return row
    try:
        return row["hash"], SampleResult.model_validate(row["result"])
    except (KeyError, TypeError, ValidationError, RecursionError, MemoryError):
        return "not a sample result of this version"
