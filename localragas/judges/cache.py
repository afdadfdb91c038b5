"""Persistent judge cache: SQLite in WAL mode, safe with several processes.

Key: sha256 of the judge fingerprint (model sha256 + decoding settings), the output schema and the full prompt.
A changed prompt, model, setting or schema is a miss. Only replies that validated against their schema are stored.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path

from .. import paths
from ..prompts import Prompt

DB_NAME = "judge-cache.sqlite3"

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


class JudgeCache:
    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else paths.cache_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / DB_NAME
        # autocommit; every statement is its own transaction, so concurrent writers never hold a lock for long
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self._lock = threading.Lock()  # one connection shared by the runner's threads (evaluate(concurrency=N))
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def get(self, key: str) -> tuple[str, int, int] | None:
        """(reply, prompt_tokens, completion_tokens) or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def put(self, key: str, judge: str, prompt_name: str, reply: str, prompt_tokens: int, completion_tokens: int,
            seconds: float) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, judge, prompt_name, reply, prompt_tokens, completion_tokens, seconds, time.time()),
            )

    def get_vector(self, key: str) -> bytes | None:
        with self._lock:
            row = self._db.execute("SELECT vector FROM embeddings WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put_vector(self, key: str, vector: bytes) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", (key, vector))

    def info(self) -> dict:
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
        n = self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
        self._db.execute("DELETE FROM replies")
        self._db.execute("DELETE FROM embeddings")
        self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "JudgeCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
