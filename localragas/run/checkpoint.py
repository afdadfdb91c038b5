"""Resume: each finished sample is appended to a checkpoint as it completes, so a killed run loses nothing.

One JSON line per sample: {"hash": sha256 of the sample, "result": SampleResult}. A result is reused only for a
sample with the same id and the same content. Any other line (cut by a kill, damaged, nested too deeply, longer than
MAX_LINE_BYTES, of an older format) is discarded with a warning, and its sample is judged again.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from ..core.errors import CheckpointError
from ..data.schema import Sample, SampleResult

log = logging.getLogger("localragas")
MAX_LINE_BYTES = 64 << 20  # a longer line is no result of ours: read past in pieces, never loaded whole
_WARNED_LINES = 5  # discarded lines warned about one by one; the rest are counted in one warning

# Optional fields added after checkpoints existed: left out of the hash while unset, so old hashes stay valid.
_LATER_FIELDS = ("retrieved_context_ids", "reference_context_ids", "language")


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

    def _entries(self) -> dict:
        """key -> value of every usable line; any other line is discarded with a warning (on the "localragas" logger)
        naming the file and the line. Its folder is made here: an unusable place is found before any judging
        (OSError, or CheckpointError for a checkpoint that is not a file)."""
        done: dict = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not self.path.is_file():
            raise CheckpointError(f"resume checkpoint {self.path} is not a file: delete it, or run with --no-resume")
        if not self.path.is_file():
            return done
        discarded: list[tuple[int, str]] = []
        with open(self.path, "rb") as f:
            for number, line in enumerate(_lines(f, MAX_LINE_BYTES), 1):
                if line is not None and not line.strip():
                    continue
                entry = self._entry(line)
                if isinstance(entry, str):
                    discarded.append((number, entry))
                else:
                    done[entry[0]] = entry[1]
        self._warn(discarded)
        return done

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with open(self.path, "a+b") as f:
            if f.seek(0, os.SEEK_END):
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":  # a line cut by a kill: begin a line of our own, not the end of that one
                    line = "\n" + line
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


class Checkpoint(JsonLinesCheckpoint):
    """The finished samples of an evaluation."""

    def load(self) -> dict[str, tuple[str, SampleResult]]:
        """id -> (sample hash, result) of every usable line (JsonLinesCheckpoint._entries)."""
        return self._entries()

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


def _lines(f: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Each line of a binary file; None for a line longer than `limit` bytes, which is read past in pieces."""
    while line := f.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = f.readline(1 << 20)
        yield None


def _json_line(line: bytes | None) -> object:
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
