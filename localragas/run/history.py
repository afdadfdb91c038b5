"""The run history: one SQLite file in the state folder (core/paths.py history_file, .localragas/history.sqlite) that
every run adds its record to (run/history_record.py makes it from the finished report), read by `localragas runs` and
`localragas view`.

Tables (schema version in PRAGMA user_version, SCHEMA_VERSION):
    runs    one row a run: the columns lists filter and sort on (when, name, dataset, its hash, verdict) and `record`,
            the rest of its RunRecord as JSON (tags, rows, means with intervals, outputs) with "method": the sha of
            the METHOD part (metric options, judge, calibration, prompts, embedder, thresholds, version) in `shared`
    tags    (run, tag)
    scores  (run, body): the per-sample scores, zlib-compressed JSON {"samples": the sha of the ids (and
            categories, and a turn's conversation) in `shared`, "metrics": {metric: [score or null]}, "unscored": {metric: {position: reason}}}:
            two runs compare sample by sample from it even when their report files are gone; listing never reads it
    shared  (sha, body): what many runs share, stored once (zlib-compressed JSON, keyed by its sha256): a method, a
            dataset's sample ids. This keeps a run at about a kilobyte (docs/history.md). Removing a run removes
            the shared rows no run left refers to.
WAL mode and a busy timeout: runs in several processes add their records safely (each a BEGIN IMMEDIATE
transaction). A file that is not a history, or one of a newer schema: HistoryError naming the file and the reset; one
another process holds past the busy timeout: HistoryError saying so (wait, or close it), never a reset.
A damaged run (its record not JSON of a run, its scores not zlib-compressed JSON, a shared row it refers to missing or
damaged) is one run's trouble: listing leaves it out and names it in `damaged`, reading it is a DamagedRunError
naming the file, the run and `runs rm`, and removing it works.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import BaseModel, Field

from ..core import paths
from ..core.errors import DamagedRunError, HistoryError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000  # a writer waits this long for another process's transaction
RUN_ID_MAX = (1 << 63) - 1  # SQLite's largest INTEGER: a larger id is no run, never an OverflowError
# what reading a damaged row raises: bad JSON or UTF-8 (ValueError), a bad compressed body (zlib.error), JSON of the
# wrong shape (TypeError, KeyError, AttributeError; pydantic's ValidationError is a ValueError), nesting too deep
_DAMAGE = (ValueError, TypeError, KeyError, AttributeError, zlib.error, RecursionError)

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
CREATE TABLE IF NOT EXISTS shared (sha TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
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
    ids_sha256: str | None = None  # of the sample ids (16 hex digits): evaluate()'s runs of one set of samples
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
    # people's spot checks (report.spot_checks): metric -> {"labelled": items with a label, "items": its items}
    checked: dict[str, dict[str, int]] = Field(default_factory=dict)

    def metric(self, name: str) -> MetricRecord | None:
        return next((m for m in self.metrics if m.metric == name), None)


def reset_hint(path: Path) -> str:
    return f"reset it with `localragas runs --reset` (or delete {path})"


def is_busy(e: BaseException) -> bool:
    """Whether an SQLite error is another connection's lock (SQLITE_BUSY, SQLITE_LOCKED) outlasting the busy
    timeout: the file is sound, only held."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)
    return isinstance(e, sqlite3.OperationalError) and "locked" in str(e)


def busy_message(path: Path) -> str:
    """What a held history says: who holds it and what to do (never a reset: the file is sound)."""
    return (f"run history {path}: another process holds it (a run recording its result, `localragas runs rm`, a "
            f"program with the file open) and kept it past {BUSY_TIMEOUT_MS / 1000:g} s: wait for it to finish, or "
            "close it, and try again; nothing is wrong with the file")


METHOD = ("gate_on", "metric_options", "judge", "calibration", "prompts", "embedder", "thresholds", "version")
_COLUMNS = ("started", "name", "dataset", "dataset_sha256", "verdict")  # kept in their columns, not in `record`


class History:
    """The history file at `path` (default: core/paths.py history_file()). Opened per use: `with History() as h:`."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else paths.history_file()
        self._db: sqlite3.Connection | None = None
        self._shared: dict[str, Any] = {}  # shared bodies read, by sha
        self.damaged: list[str] = []  # why each damaged run runs() left out could not be read, one line each

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _error(self, e: Exception) -> HistoryError:
        if is_busy(e):
            return HistoryError(busy_message(self.path))
        return HistoryError(f"run history {self.path}: {e}; {reset_hint(self.path)}")

    @property
    def db(self) -> sqlite3.Connection:
        """The connection, the schema made (or checked) on first use."""
        if self._db is None:
            deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
            while True:  # SQLite answers a schema or journal-mode change under another writer BUSY at once, without
                try:     # its busy handler: two processes making the history together wait for each other here
                    self._db = self._connect()
                    break
                except HistoryError as e:
                    if not (isinstance(e.__cause__, sqlite3.Error) and is_busy(e.__cause__)) \
                            or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        return self._db

    def _connect(self) -> sqlite3.Connection:
        """A connection with the schema made (or checked); a HistoryError when it cannot be had."""
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
            raise self._error(e) from e
        return db

    def add(self, record: RunRecord, scores: dict[str, Any]) -> int:
        """Store a run and its per-sample scores; its id."""
        body = record.model_dump(exclude={"id", *METHOD, *_COLUMNS}, exclude_defaults=True)
        method = record.model_dump(include=set(METHOD))
        samples = {k: scores[k] for k in ("ids", "categories", "conversations") if k in scores}
        try:
            db = self.db
            with _write(db):
                body["method"] = self._share(db, method)
                cur = db.execute("INSERT INTO runs (started, name, dataset, dataset_sha256, verdict, record) "
                                 "VALUES (?, ?, ?, ?, ?, ?)",
                                 (record.started, record.name, record.dataset, record.dataset_sha256, record.verdict,
                                  json.dumps(body, separators=(",", ":"))))
                run = int(cur.lastrowid)  # type: ignore[arg-type]
                db.executemany("INSERT INTO tags (run, tag) VALUES (?, ?)", [(run, t) for t in record.tags])
                rest = {k: v for k, v in scores.items() if k not in samples}
                db.execute("INSERT INTO scores (run, body) VALUES (?, ?)",
                           (run, pack({**rest, "samples": self._share(db, samples)})))
        except sqlite3.Error as e:
            raise self._error(e) from None
        return run

    @staticmethod
    def _share(db: sqlite3.Connection, value: Any) -> str:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        db.execute("INSERT OR IGNORE INTO shared (sha, body) VALUES (?, ?)", (sha, zlib.compress(text.encode(), 9)))
        return sha

    def _shared_body(self, sha: str) -> Any:
        if sha not in self._shared:
            rows = self._read("SELECT body FROM shared WHERE sha = ?", [sha])
            if not rows:
                raise KeyError(f"it refers to the shared row {sha}, which is missing")
            self._shared[sha] = unpack(rows[0][0])
        return self._shared[sha]

    def _damaged(self, run: int, what: str, e: BaseException) -> DamagedRunError:
        why = " ".join(str(e).split())[:160] or type(e).__name__
        return DamagedRunError(f"run history {self.path}: run {run} is damaged ({what}: {why}); "
                               f"`localragas runs rm {run}` forgets it")

    def _record(self, row: tuple[Any, ...]) -> RunRecord:
        """A RunRecord of a row (id, started, name, dataset, dataset_sha256, verdict, record); a damaged one is a
        DamagedRunError naming the run."""
        try:
            body = json.loads(row[-1])
            method = self._shared_body(body.pop("method"))
            return RunRecord.model_validate({"id": row[0], **dict(zip(_COLUMNS, row[1:-1])), **method, **body})
        except _DAMAGE as e:
            raise self._damaged(row[0], "its record", e) from None

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
        sql = f"SELECT id, {', '.join(_COLUMNS)}, record FROM runs" + (" WHERE " + " AND ".join(where) if where
                                                                        else "") + \
            " ORDER BY started DESC, id DESC" + (" LIMIT ?" if limit else "")
        out = []
        for row in self._read(sql, args + ([limit] if limit else [])):
            try:
                out.append(self._record(row))
            except DamagedRunError as e:  # the other runs are listed
                self.damaged.append(str(e))
        return out

    def count(self) -> int:
        return self._read("SELECT count(*) FROM runs", [])[0][0] if self.path.exists() else 0

    def get(self, run: int) -> RunRecord:
        rows = self._read(f"SELECT id, {', '.join(_COLUMNS)}, record FROM runs WHERE id = ?", [run]) \
            if self.path.exists() and 0 < run <= RUN_ID_MAX else []
        if not rows:
            raise self._no_run(run)
        return self._record(rows[0])

    def _no_run(self, run: int) -> HistoryError:
        return HistoryError(f"no run {run} in the run history {self.path} (`localragas runs` lists them)")

    def scores(self, run: int) -> dict[str, Any]:
        rows = self._read("SELECT body FROM scores WHERE run = ?", [run]) \
            if self.path.exists() and 0 < run <= RUN_ID_MAX else []
        if not rows:
            raise HistoryError(f"no scores of run {run} in the run history {self.path}")
        try:
            body = unpack(rows[0][0])
            return {**self._shared_body(body.pop("samples")), **body}
        except _DAMAGE as e:
            raise self._damaged(run, "its per-sample scores", e) from None

    def remove(self, run: int) -> None:
        """Forget a run: its rows, and in the same transaction the shared rows (its method, its sample ids) that no
        other run refers to. A damaged run is removed too (the shared rows its damaged parts named are kept)."""
        if not (self.path.exists() and 0 < run <= RUN_ID_MAX):
            raise self._no_run(run)
        try:
            db = self.db
            with _write(db):
                row = db.execute("SELECT record, (SELECT body FROM scores WHERE scores.run = runs.id) FROM runs "
                                 "WHERE id = ?", (run,)).fetchone()
                if row is None:
                    raise self._no_run(run)
                for table, column in (("tags", "run"), ("scores", "run"), ("runs", "id")):
                    db.execute(f"DELETE FROM {table} WHERE {column} = ?", (run,))  # noqa: S608 - ours
                gone = _unreferenced(db, _readable(row[0], json.loads), _ref(_readable(row[1], unpack), "samples"))
                db.executemany("DELETE FROM shared WHERE sha = ?", [(sha,) for sha in gone])
        except sqlite3.Error as e:
            raise self._error(e) from None
        for sha in gone:
            self._shared.pop(sha, None)

    def _read(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise self._error(e) from None

    def reset(self) -> list[Path]:
        """Delete the history file (and its WAL files): the paths removed."""
        self.close()
        gone = []
        for p in paths.with_sidecars(self.path):
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


def _unreferenced(db: sqlite3.Connection, record: dict[str, Any], samples: str) -> list[str]:
    """Of a removed run's shared rows (record["method"], samples), those no run left refers to. Two runs' sample ids
    are one row only if their ids_sha256 are equal (or one is unknown): only those runs' scores are read."""
    left: set[str] = {sha for sha in (_ref(record, "method"), samples) if sha}
    ids = record.get("ids_sha256")
    maybe = []
    for other, text in db.execute("SELECT id, record FROM runs").fetchall():
        body = _readable(text, json.loads)  # a damaged run cannot be read whatever is kept for it
        left.discard(_ref(body, "method"))
        if samples in left and (ids is None or body.get("ids_sha256") in (None, ids)):
            maybe.append(other)
    for other in maybe:
        if samples not in left:
            break
        for (blob,) in db.execute("SELECT body FROM scores WHERE run = ?", (other,)):
            left.discard(_ref(_readable(blob, unpack), "samples"))
    return sorted(left)


def _readable(value: Any, read: Callable[[Any], Any]) -> dict[str, Any]:
    """A stored record or scores body as read by `read`; {} when it is missing or damaged."""
    try:
        body = read(value) if value is not None else {}
    except _DAMAGE:
        return {}
    return body if isinstance(body, dict) else {}


def _ref(body: dict[str, Any], key: str) -> str:
    """The sha of a shared row a stored body refers to under `key` ("" when none, or not a sha)."""
    sha = body.get(key)
    return sha if isinstance(sha, str) else ""


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
