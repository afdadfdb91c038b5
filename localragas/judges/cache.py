"""Persistent judge cache: SQLite in WAL mode, safe with several processes.

Key: sha256 of the judge fingerprint (model sha256 + decoding settings), the output schema and the full prompt.
A changed prompt, model, setting or schema is a miss. Only replies that validated against their schema are stored.

A cache that is corrupt (SQLite quick_check), of another schema, or unreadable is refused when it is opened, and any
later read or write error stops the run: both raise CacheError naming the file and the fix.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterator

from ..core import paths
from ..core.errors import CacheError
from ..prompts import Prompt

DB_NAME = "judge-cache.sqlite3"
SCHEMA_VERSION = 1  # PRAGMA user_version; 0: a cache from before the version was recorded (same tables)
_COLUMNS = {
    "replies": ["key", "judge", "prompt_name", "reply", "prompt_tokens", "completion_tokens", "seconds", "created"],
    "embeddings": ["key", "vector"],
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    prompt_name TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    vector BLOB NOT NULL
);
"""


def cache_key(fingerprint: str, schema: str, prompt: Prompt) -> str:
    h = hashlib.sha256()
    for part in (fingerprint, schema, prompt.system, prompt.user):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def cache_files(folder: Path) -> list[Path]:
    """The cache's database and its WAL and shared-memory files, those that exist."""
    return [p for p in (folder / DB_NAME, folder / f"{DB_NAME}-wal", folder / f"{DB_NAME}-shm") if p.is_file()]


def remove_cache(folder: str | Path) -> list[Path]:
    """Delete the cache files (a cache too corrupt to open cannot be cleared from inside). The removed paths."""
    gone = cache_files(Path(folder))
    for p in gone:
        p.unlink()
    return gone


def cache_file(folder: str | Path | None = None) -> Path:
    """The cache's database in `folder`, else in the state folder's cache (paths.cache_dir)."""
    return (Path(folder) if folder is not None else paths.cache_dir()) / DB_NAME


class JudgeCache:
    def __init__(self, folder: str | Path | None = None):
        self.path = cache_file(folder)
        self.folder = self.path.parent
        self._lock = threading.Lock()  # one connection shared by the runner's threads (evaluate(concurrency=N))
        self._db: sqlite3.Connection | None = None
        try:
            with self._guard("cannot be opened"):
                self.folder.mkdir(parents=True, exist_ok=True)
                # autocommit; every statement is its own transaction, so concurrent writers never hold a lock long
                self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._check()
        except BaseException:
            self.close()
            raise

    def error(self, problem: str, corrupt: bool = True, full: bool = False) -> CacheError:
        """A CacheError naming the file and the fix: for a corrupt cache, deleting it; for a full disk, space; else,
        the place."""
        fix = (f"delete it with `localragas cache clear --cache-dir {self.folder}`" if corrupt else
               "the disk is full: free space, or choose another --cache-dir on another disk" if full else
               "check the folder's permissions and free space, or choose another --cache-dir")
        return CacheError(f"judge cache {self.path} {problem}: {fix}, or run without the cache (--no-cache)", corrupt)

    @contextlib.contextmanager
    def _guard(self, problem: str) -> Iterator[None]:
        """sqlite3 and OS errors as a CacheError. A DatabaseError is damage (corrupt, not a database); an
        OperationalError (read-only, cannot open, disk I/O, locked, full) or an OSError is the place it lives. A
        write that fails is rolled back by SQLite: the cache keeps every reply stored before it."""
        try:
            yield
        except (sqlite3.Error, OSError) as e:
            corrupt = isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.OperationalError)
            full = (getattr(e, "sqlite_errorcode", None) == getattr(sqlite3, "SQLITE_FULL", 13)
                    or getattr(e, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in str(e))
            raise self.error(f"{problem} ({type(e).__name__}: {e})", corrupt and not full, full) from None

    def _check(self) -> None:
        """Refuse a corrupt file (quick_check), a newer schema, or tables of another shape; create a new cache's."""
        found = [r[0] for r in self._db.execute("PRAGMA quick_check(5)").fetchall()]
        if found != ["ok"]:
            detail = "; ".join(" ".join(str(x).split()) for x in found)
            raise self.error(f"is corrupt (SQLite quick_check: {detail[:300]})")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise self.error(f"has schema version {version}, newer than this localragas reads ({SCHEMA_VERSION})")
        for table, columns in _COLUMNS.items():
            got = [r[1] for r in self._db.execute(f"PRAGMA table_info({table})").fetchall()]
            if got and got != columns:
                raise self.error(f"is not a localragas judge cache (table {table} has columns {', '.join(got)})")
        self._db.executescript(_SCHEMA)
        if version < SCHEMA_VERSION:
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def get(self, key: str) -> tuple[str, int, int] | None:
        """(reply, prompt_tokens, completion_tokens) or None."""
        with self._lock, self._guard("could not be read"):
            row = self._db.execute(
                "SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def put(self, key: str, judge: str, prompt_name: str, reply: str, prompt_tokens: int, completion_tokens: int,
            seconds: float) -> None:
        with self._lock, self._guard("could not be written"):
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, judge, prompt_name, reply, prompt_tokens, completion_tokens, seconds, time.time()),
            )

    def get_vector(self, key: str) -> bytes | None:
        with self._lock, self._guard("could not be read"):
            row = self._db.execute("SELECT vector FROM embeddings WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put_vector(self, key: str, vector: bytes) -> None:
        with self._lock, self._guard("could not be written"):
            self._db.execute("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", (key, vector))

    def info(self) -> dict:
        with self._guard("could not be read"):
            rows = self._db.execute(
                "SELECT judge, COUNT(*), SUM(seconds) FROM replies GROUP BY judge ORDER BY judge"
            ).fetchall()
        size = sum(p.stat().st_size for p in self.folder.glob(DB_NAME + "*") if p.is_file())
        return {
            "path": str(self.path),
            "entries": sum(r[1] for r in rows),
            "bytes": size,
            "judges": {r[0]: {"entries": r[1], "judge_seconds_saved_per_rerun": round(r[2] or 0.0, 1)} for r in rows},
        }

    def clear(self) -> int:
        with self._guard("could not be cleared"):
            n = self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
            self._db.execute("DELETE FROM replies")
            self._db.execute("DELETE FROM embeddings")
            self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> "JudgeCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
