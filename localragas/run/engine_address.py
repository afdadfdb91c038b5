"""Where the Dask engine's scheduler is (`--address`, `address` in localragas.toml): the forms accepted, checked when the
settings are read (run/settings.py), before anything starts."""
from __future__ import annotations

import os
import re

_ADDRESS = re.compile(r"^(?:(?:tcp|tls)://[^\s/:]+:\d{1,5}|local:\d+)$")


def check_address(address: str) -> str:
    """An --address as written (tcp://HOST:PORT, tls://HOST:PORT or local:N with 1 <= N <= this machine's cores),
    else a ValueError saying which forms are accepted (RunSettings reports it as a ConfigError naming the key)."""
    address = address.strip()
    if not _ADDRESS.match(address) or address.startswith("local:") and int(address.removeprefix("local:")) < 1:
        raise ValueError(f"a Dask scheduler address is tcp://HOST:PORT (or tls://HOST:PORT), or local:N for a cluster "
                         f"of N worker processes on this machine, got {address!r}")
    if address.startswith("local:") and int(address.removeprefix("local:")) > cores():
        raise ValueError(f"{address} asks for more worker processes than this machine's {cores()} core(s): each "
                         f"worker loads its own judge and needs a core; give local:{cores()} at most (for more judge "
                         "calls in flight to a judge server, --concurrency N with the local engine)")
    return address


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1
