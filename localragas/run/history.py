"""The run history: one SQLite file in the state folder (core/paths.py history_file, .localragas/history.sqlite) that
every run adds its record to (run/history_record.py makes it from the finished report), read by `localragas runs` and
`localragas view`.

Tables (schema version in PRAGMA user_version, SCHEMA_VERSION):
    runs    one row a run: the columns lists filter and sort on (when, name, dataset, its hash, verdict) and `record`,
            the rest as JSON (RunRecord: metrics and options, judge, calibration, prompts, means with intervals...)
    tags    (run, tag)
    scores  (run, body): the per-sample scores, zlib-compressed JSON {"ids", "categories", "metrics": {metric:
            [score or null]}, "unscored": {metric: {position: reason}}}: two runs compare sample by sample from it
            even when their report files are gone; listing never reads it.
WAL mode and a busy timeout: runs in several processes add their records safely (each a BEGIN IMMEDIATE
transaction). A file that is not a history, or one of a newer schema: HistoryError naming the file and the reset.
"""
from __future__ import annotations

import json
import sqlite3
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, Field

from ..core import paths
from ..core.errors import HistoryError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000  # a writer waits this long for another process's transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started TEXT NOT NULL,
    name TEXT,
    dataset TEXT,
    dataset_sha256 TEXT,
    verdict TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started);
CREATE INDEX IF NOT EXISTS runs_dataset ON runs (dataset, started);
CREATE TABLE IF NOT EXISTS tags (run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE, tag TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tags_tag ON tags (tag, run);
CREATE TABLE IF NOT EXISTS scores (run INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE, body BLOB NOT NULL);
"""


class MetricRecord(BaseModel):
    """One metric of a run: its mean and interval, counts, direction and gate."""

    metric: str
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    scored: int = 0
    unscored: int = 0
    errors: int = 0
    higher_is_better: bool = True
    threshold: float | None = None
    status: str | None = None  # the gate's: passed, failed, ...; None: not gated


class RunRecord(BaseModel):
    """A run as the history keeps it (id: set once stored)."""

    id: int | None = None
    started: str
    name: str | None = None
    tags: list[str] = Field(default_factory=list)
    dataset: str | None = None  # the data file as given; None: evaluate() on samples in hand
    dataset_sha256: str | None = None  # of the file, or of the samples given to evaluate()
    rows: int = 0
    skipped: int = 0
    verdict: str  # passed, failed, not evaluated, no gate
    gate_on: str = "mean"
    metrics: list[MetricRecord] = Field(default_factory=list)
    metric_options: dict[str, Any] = Field(default_factory=dict)
    judge: dict[str, Any] = Field(default_factory=dict)  # name, fingerprint
    calibration: dict[str, Any] | None = None  # source, sha256
    prompts: dict[str, Any] = Field(default_factory=dict)  # digest, sha256 per family (first 16), overridden
    embedder: str | None = None
    thresholds: dict[str, float] = Field(default_factory=dict)
    version: str | None = None  # localragas's
    wall_seconds: float | None = None
    outputs: dict[str, str] = Field(default_factory=dict)  # format -> the file written (json: the full report)

    def metric(self, name: str) -> MetricRecord | None:
        return next((m for m in self.metrics if m.metric == name), None)


def reset_hint(path: Path) -> str:
    return f"reset it with `localragas runs --reset` (or delete {path})"


class History:
    """The history file at `path` (default: core/paths.py history_file()). Opened per use: `with History() as h:`."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else paths.history_file()
        self._db: sqlite3.Connection | None = None

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _error(self, e: Exception) -> HistoryError:
        return HistoryError(f"run history {self.path}: {e}; {reset_hint(self.path)}")

    @property
    def db(self) -> sqlite3.Connection:
        """The connection, the schema made (or checked) on first use."""
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
                try:
                    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                    db.execute("PRAGMA foreign_keys = ON")
                    version = db.execute("PRAGMA user_version").fetchone()[0]
                    if version > SCHEMA_VERSION:
                        raise HistoryError(f"run history {self.path}: written by a newer localragas (schema "
                                           f"{version}, this one reads {SCHEMA_VERSION}); upgrade, or "
                                           f"{reset_hint(self.path)}")
                    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        db.execute("PRAGMA journal_mode = WAL")
                    if version < SCHEMA_VERSION:
                        with _write(db):
                            if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:  # not made meanwhile
                                for statement in filter(str.strip, _SCHEMA.split(";")):
                                    db.execute(statement)
                                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                except BaseException:
                    db.close()
                    raise
            except (sqlite3.Error, OSError) as e:
                raise self._error(e) from None
            self._db = db
        return self._db

    def add(self, record: RunRecord, scores: dict[str, Any]) -> int:
        """Store a run and its per-sample scores; its id."""
        body = record.model_dump(exclude={"id"}, exclude_defaults=True)
        try:
            db = self.db
            with _write(db):
                cur = db.execute("INSERT INTO runs (started, name, dataset, dataset_sha256, verdict, record) "
                                 "VALUES (?, ?, ?, ?, ?, ?)",
                                 (record.started, record.name, record.dataset, record.dataset_sha256, record.verdict,
                                  json.dumps(body, separators=(",", ":"))))
                run = int(cur.lastrowid)  # type: ignore[arg-type]
                db.executemany("INSERT INTO tags (run, tag) VALUES (?, ?)", [(run, t) for t in record.tags])
                db.execute("INSERT INTO scores (run, body) VALUES (?, ?)", (run, pack(scores)))
        except sqlite3.Error as e:
            raise self._error(e) from None
        return run

    def runs(self, *, dataset: str | None = None, tag: str | None = None, name: str | None = None,
             limit: int | None = None) -> list[RunRecord]:
        """The runs, newest first; dataset: its path as given (or a part of it) or a prefix of its sha256."""
        if not self.path.exists():
            return []
        where, args = [], []
        if dataset:
            where.append("(dataset LIKE ? ESCAPE '\\' OR dataset_sha256 LIKE ? ESCAPE '\\')")
            args += [f"%{_like(dataset)}%", f"{_like(dataset)}%"]
        if name:
            where.append("name = ?")
            args.append(name)
        if tag:
            where.append("id IN (SELECT run FROM tags WHERE tag = ?)")
            args.append(tag)
        sql = "SELECT id, record FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + \
              " ORDER BY started DESC, id DESC" + (" LIMIT ?" if limit else "")
        return [RunRecord.model_validate_json(rec).model_copy(update={"id": i})
                for i, rec in self._read(sql, args + ([limit] if limit else []))]

    def count(self) -> int:
        return self._read("SELECT count(*) FROM runs", [])[0][0] if self.path.exists() else 0

    def get(self, run: int) -> RunRecord:
        rows = self._read("SELECT id, record FROM runs WHERE id = ?", [run]) if self.path.exists() else []
        if not rows:
            raise HistoryError(f"no run {run} in the run history {self.path} (`localragas runs` lists them)")
        return RunRecord.model_validate_json(rows[0][1]).model_copy(update={"id": rows[0][0]})

    def scores(self, run: int) -> dict[str, Any]:
        rows = self._read("SELECT body FROM scores WHERE run = ?", [run]) if self.path.exists() else []
        if not rows:
            raise HistoryError(f"no scores of run {run} in the run history {self.path}")
        return unpack(rows[0][0])

    def remove(self, run: int) -> None:
        self.get(run)  # named when missing
        try:
            with _write(self.db):
                for table, column in (("tags", "run"), ("scores", "run"), ("runs", "id")):
                    self.db.execute(f"DELETE FROM {table} WHERE {column} = ?", (run,))  # noqa: S608 - ours
        except sqlite3.Error as e:
            raise self._error(e) from None

    def _read(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise self._error(e) from None

    def reset(self) -> list[Path]:
        """Delete the history file (and its WAL files): the paths removed."""
        self.close()
        gone = []
        for p in (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))):
            if p.exists():
                p.unlink()
                gone.append(p)
        return gone


@contextmanager
def _write(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction taken at once (BEGIN IMMEDIATE): two processes never both hold a read they upgrade."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def pack(scores: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(scores, separators=(",", ":")).encode("utf-8"), 9)


def unpack(body: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(body))


def sample_scores(scores: dict[str, Any]) -> Iterator[tuple[str, str, float | None, str | None]]:
    """(sample id, metric, score or None, unscored reason) of a run's stored scores, sample by sample."""
    for metric, values in scores.get("metrics", {}).items():
        reasons = scores.get("unscored", {}).get(metric, {})
        for i, sample in enumerate(scores.get("ids", [])):
            yield sample, metric, values[i], reasons.get(str(i))
