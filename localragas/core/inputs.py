"""Reading a file the user names, failing closed: a path that is not a regular file (a FIFO would block for ever, a
device such as /dev/zero never ends, a socket) is refused before it is opened, and so is a file over a limit; the
read itself is bounded too (a file that grows, or one stat calls empty, as in /proc).

One rule for every such file: datasets and labelled files (data/dataset.py), stored reports (report/json_report.py),
settings files (run/config.py). Each caller passes `fail`, which builds its own error from a message about the file, so
the message reads "PATH: is not a regular file but a FIFO (named pipe): ..." everywhere.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import ConfigError, LocalragasError

DEFAULT_MAX_INPUT_BYTES = 4 << 30  # 4 GiB; --max-input-bytes, max_input_bytes in localragas.toml
RAISE_LIMIT = "raise the limit with --max-input-bytes (max_input_bytes in localragas.toml or the Python API)"
_NOT_REGULAR = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
                stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}
Fail = Callable[[str], Exception]  # a message about the file -> the error to raise (which names the file)


def check_max_input_bytes(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"max input bytes must be a whole number of bytes >= 1, got {limit!r}")
    return limit


def failing(path: str | Path, error: Callable[[str], Exception] = LocalragasError) -> Fail:
    """A Fail raising `error("PATH: message")`."""
    return lambda message: error(f"{path}: {message}")


def over_limit(size: int | None, limit: int, hint: str = RAISE_LIMIT) -> str:
    """The size (None: found while reading), the limit and how to raise it."""
    what = f"is {size:,} bytes, over" if size is not None else "holds more than"
    return f"the file {what} the input limit of {limit:,} bytes: {hint}"


def check_input(p: Path, limit: int, fail: Fail, *, folder_ok: bool = False, hint: str = RAISE_LIMIT) -> None:
    """Refuse, before anything opens it, a path that is not a regular file (nor a folder, with folder_ok), or a file
    over `limit` bytes. stat follows symlinks; a path it cannot stat is left to the reader, which says why."""
    try:
        st = p.stat()
    except OSError:
        return
    kind = stat.S_IFMT(st.st_mode)
    if kind == stat.S_IFREG:
        if st.st_size > limit:
            raise fail(over_limit(st.st_size, limit, hint))
        return
    if kind == stat.S_IFDIR and folder_ok:
        return
    what = _NOT_REGULAR.get(kind, "something else")
    raise fail(f"is not a regular file but {what}: save the data to a file and give its path")


def open_input(p: Path, fail: Fail) -> BinaryIO:
    try:
        return open(p, "rb")
    except FileNotFoundError:
        raise fail("file not found") from None
    except OSError as e:
        raise fail(f"cannot read file: {e.strerror or e}") from None


def _read(f: BinaryIO, fail: Fail, size: int, read_line: bool = False) -> bytes:
    try:
        return f.readline(size) if read_line else f.read(size)
    except OSError as e:
        raise fail(f"cannot read file: {e.strerror or e}") from None


def read_bounded(p: Path, limit: int, fail: Fail, hint: str = RAISE_LIMIT) -> bytes:
    """The whole file, refused once more than `limit` bytes have been read."""
    chunks, total = [], 0
    with open_input(p, fail) as f:
        size = os.fstat(f.fileno()).st_size + 1  # read(n) allocates n bytes: the file's size, not the limit
        while total <= limit and (chunk := _read(f, fail, min(size, limit + 1 - total))):
            chunks.append(chunk)  # a file that grew, or one stat calls empty (/proc), is read on in chunks
            total, size = total + len(chunk), 1 << 20
    raw = b"".join(chunks)
    if len(raw) > limit:
        raise fail(over_limit(None, limit, hint))
    return raw


def read_lines(p: Path, limit: int, fail: Fail, hint: str = RAISE_LIMIT) -> Iterator[bytes]:
    """The file's lines without their newline, read one at a time (readline(n) allocates only what it reads); more
    than `limit` bytes in all are refused."""
    total = 0
    with open_input(p, fail) as f:
        while raw := _read(f, fail, limit - total + 1, read_line=True):
            total += len(raw)
            if total > limit:
                raise fail(over_limit(None, limit, hint))
            yield raw[:-1] if raw.endswith(b"\n") else raw


def read_input(p: Path, limit: int, fail: Fail, hint: str = RAISE_LIMIT) -> bytes:
    """check_input, then read_bounded: the bytes of a regular file of at most `limit` bytes."""
    check_input(p, check_max_input_bytes(limit), fail, hint=hint)
    return read_bounded(p, limit, fail, hint)
