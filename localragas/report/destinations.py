"""Output paths checked before any judging: a report must never overwrite an input, another report, or a folder, and an
unwritable path is found at once, not after an hour of judging."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..core.errors import OutputError


def _real(path: Path) -> Path:
    """The path with every symlink followed (also a dangling one: where writing would create the file)."""
    return Path(os.path.realpath(path))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links too
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    return folder.is_dir() and (path == folder or folder in path.parents)


def _nearest_existing(path: Path) -> Path:
    for p in [path, *path.parents]:
        if p.exists():
            return p
    return Path(path.anchor or ".")


def _unwritable(real: Path) -> str | None:
    """Why a report cannot be written at `real` (symlinks already followed), or None."""
    if real.is_dir():
        return "is a folder"
    if real.exists() and not real.is_file():
        if not (stat.S_ISCHR(real.stat().st_mode) or stat.S_ISFIFO(real.stat().st_mode)):
            return "is neither a regular file, a character device nor a FIFO"
        # a character device (/dev/null, /dev/stdout) or a FIFO: written to directly
        return None if os.access(real, os.W_OK) else "is not writable"
    folder = _nearest_existing(real.parent)
    if not folder.is_dir():
        return f"cannot be created: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot be created: the folder {folder} is not writable (permissions or a read-only file system)"
    return None


def check_outputs(outputs: dict[str, Path | None], inputs: Iterable[Path | tuple[Path, str | None]]) -> None:
    """Refuse (OutputError, exit 2) an output that is a folder, an input (compared through symlinks and hard links, or
    a path inside an input folder), the same file as another output, or not writable.

    outputs: flag ('--out', '--html'…) -> path or None; inputs: the files or folders the command reads, each a path
    or (path, what it is: "the run history"), which the refusal names."""
    sources = [(Path(i), None) if not isinstance(i, tuple) else (Path(i[0]), i[1]) for i in inputs]
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        path = Path(path)
        real = _real(path)
        for source, role in sources:
            src = _real(source)
            if real == src or _same_file(real, src) or _inside(real, src):
                via = " (through a symlink)" if str(real) != os.path.abspath(path) else ""
                what = "is the input" if real == src or _same_file(real, src) else "is inside the input folder"
                raise OutputError(f"{flag} {path} {what} {source}{f' ({role})' if role else ''}{via}: writing there "
                                  "would destroy it; choose another output path")
        twin = next((k for k in seen if k == real or _same_file(k, real)), None)
        if twin is not None:
            raise OutputError(f"{flag} {path} is the same file as {seen[twin]}: each output needs its own path")
        seen[real] = f"{flag} {path}"
        why = _unwritable(real)
        if why:
            raise OutputError(f"{flag} {path} {why}: choose another output path")
