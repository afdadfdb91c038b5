from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, text: str | Iterable[str]) -> None:
    """Write text (a string, or its pieces one after another) to path through a temporary file in the same folder
    and a rename: never a half-written report.

    A symlink is written through (its target is replaced, the link stays); a character device (/dev/null,
    /dev/stdout) or a FIFO is written to directly, never replaced by a regular file."""
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = 0
    pieces = (text,) if isinstance(text, str) else text
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.writelines(pieces)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.writelines(pieces)
            f.flush()
            os.fsync(f.fileno())  # the bytes are on disk before the rename makes them the report (power loss too)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report gets the usual permissions, like open()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
