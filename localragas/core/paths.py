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


def history_file() -> Path:
    """The run history (run/history.py): one SQLite file beside the cache."""
    return state_dir() / "history.sqlite"
