"""Where a project's localragas state lives: the judge cache, run checkpoints and the run history."""
from __future__ import annotations

import os
from pathlib import Path

STATE_DIR_ENV = "LOCALRAGAS_STATE_DIR"


def state_dir() -> Path:
    """$LOCALRAGAS_STATE_DIR, else .localragas/ in the current folder (the project)."""
    return Path(os.environ.get(STATE_DIR_ENV) or ".localragas")


def cache_dir() -> Path:
    return state_dir() / "cache"


def runs_dir() -> Path:
    return state_dir() / "runs"


def temp_dir() -> Path:
    """Where results and samples kept on disk during a run go (data/result_store.py): tmp/ in the state folder."""
    return state_dir() / "tmp"


def file_hashes() -> Path:
    """The model files' sha256, keyed by path, size and mtime (judges/catalogue.py), so each is hashed once."""
    return state_dir() / "file-hashes.json"


def history_file() -> Path:
    """The run history (run/history.py): one SQLite file beside the cache."""
    return state_dir() / "history.sqlite"


SQLITE_SIDECARS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a database while it writes


def with_sidecars(db: Path) -> list[Path]:
    """A SQLite database and the files SQLite may keep beside it."""
    return [db, *(db.with_name(db.name + s) for s in SQLITE_SIDECARS)]


def state_inputs() -> list[tuple[Path, str]]:
    """localragas's own state, which commands read (path, what it is): never a place for an output (the output
    guard, report/destinations.py, refuses every one; the state folder itself holds outputs too, e.g. view.html)."""
    return [*((p, "the run history") for p in with_sidecars(history_file())),
            (runs_dir(), "the resume checkpoints' folder"), (cache_dir(), "the judge cache folder"),
            (temp_dir(), "the folder of results kept on disk"), (file_hashes(), "the model files' hash record")]
