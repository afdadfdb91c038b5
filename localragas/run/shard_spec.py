"""`--shard I/N`: what it means (every N-th sample of the data, from the I-th) and its parser, read when the settings
are (run/settings.py); run/shard.py merges the shards' reports."""
from __future__ import annotations

import re

from ..core.errors import ConfigError

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """'2/4' -> (2, 4): shard 2 of 4, counted from 1."""
    m = _SPEC.match(text or "")
    if not m:
        raise ConfigError(f"--shard must look like I/N (e.g. 1/4), got {text!r}")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ConfigError(f"--shard {text}: I must be between 1 and N (N >= 1)")
    return i, n


def shard_positions(total: int, index: int, count: int) -> list[int]:
    """Positions (0-based, in dataset order) of shard index/count: every count-th sample, so shards differ in size
    by at most one sample and each holds a spread of the dataset (not its first or last part only)."""
    return list(range(index - 1, total, count))
