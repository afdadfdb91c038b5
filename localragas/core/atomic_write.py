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
    and a rename: never a half-written report. A failed write (a full disk) removes the temporary file and leaves
    an earlier file at path as it was; its OSError names path (a write error names no file of its own), so the
    message a user reads says which output and what to do (core.errors.environment_message).

    A symlink is written through (its target is replaced, the link stays); a character device (/dev/null,
    /dev/stdout) or a FIFO is written to directly, never replaced by a regular file."""
    shown = str(path)
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = 0
    pieces = (text,) if isinstance(text, str) else text
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.writelines(pieces)
        except OSError as e:
            raise naming(e, shown) from e
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:  # names the temporary file it tried: the user's path is the one to show
        raise naming(e, shown, e.filename if isinstance(e.filename, str) and Path(e.filename).parent == path.parent
                     else None) from e
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.writelines(pieces)
            f.flush()
            os.fsync(f.fileno())  # the bytes are on disk before the rename makes them the report (power loss too)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report gets the usual permissions, like open()
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise naming(e, shown, tmp) from e
        raise


def naming(e: OSError, path: str | Path, tmp: str | None = None) -> OSError:
    """The OSError with `path` as its file when it names none, or only the temporary file `tmp` (a write, flush or
    fsync error names no file): the path the user gave is the one the message shows."""
    if e.filename is None or (tmp is not None and e.filename == tmp):
        e.filename, e.filename2 = str(path), None
    return e
