"""The cluster of `--address local:N` (run/dask_engine.py opens it): a Dask scheduler in this process and N worker
processes on 127.0.0.1, each a fresh interpreter (`python -m distributed.cli.dask_spec`, started again if it dies),
so that the caller's script is never imported again by a worker: a plain script without an `if __name__ ==
"__main__":` guard runs as it is. Dask's log lines and warnings are shown only with verbose (--verbose).
"""
from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("localragas")
START_SECONDS = 120  # for the N worker processes of local:N to start and join
RESTART_SECONDS = 1.0  # a local:N worker that died is started again after this
STOP_SECONDS = 5.0  # for a local:N worker to close when the run ends, before it is killed
_DASK_LOGGERS = ("distributed", "tornado")  # Dask's own log lines: port warnings, CommClosedError at shutdown
_DASK_WARNS_FROM = (r"distributed(\.|$)", r"tornado(\.|$)", r"contextlib$")  # Dask warns from within a `with` too


def local_cluster(workers: int, verbose: bool) -> Any:
    """A Dask cluster of `workers` single-threaded worker processes on 127.0.0.1 (WorkerProcess), its scheduler in
    this process with no dashboard (its HTTP routes on a free port of 127.0.0.1, never 8787). On Windows, Dask's
    LocalCluster (its workers import the caller's main module again: a script needs the __main__ guard there)."""
    import distributed  # noqa: PLC0415
    from distributed.worker_memory import parse_memory_limit  # noqa: PLC0415

    level = logging.INFO if verbose else logging.CRITICAL
    if sys.platform == "win32":  # pragma: no cover - asyncio subprocesses of Dask's loop are POSIX here
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, silence_logs=level)
    from distributed.deploy.spec import SpecCluster  # noqa: PLC0415

    options = {"host": "127.0.0.1", "nthreads": 1, "silence_logs": level,
               "memory_limit": parse_memory_limit("auto", 1, workers, logger=log)}  # shared out, as LocalCluster
    worker = {"cls": _worker_class(), "options": {"options": options, "verbose": verbose}}
    scheduler = {"cls": distributed.Scheduler, "options": {"host": "127.0.0.1", "port": 0, "dashboard": False,
                                                           "dashboard_address": "127.0.0.1:0"}}
    return SpecCluster(workers={i: worker for i in range(workers)}, scheduler=scheduler, worker=worker,
                       silence_logs=level, name=f"localragas local:{workers}")


def _worker_class() -> type:
    from distributed.core import Status  # noqa: PLC0415
    from distributed.deploy.spec import ProcessInterface  # noqa: PLC0415

    class WorkerProcess(ProcessInterface):
        """One Dask worker in a fresh interpreter (`python -m distributed.cli.dask_spec`): it never imports the
        caller's script. Started again when it dies (a sample that crashes it), as a Dask nanny would restart it,
        without a nanny process of its own; its output is kept off the terminal unless verbose."""

        def __init__(self, scheduler: str, name: Any = None, options: dict | None = None, verbose: bool = False):
            super().__init__()
            self.scheduler, self.name, self.verbose = scheduler, name, verbose
            self.spec = json.dumps({"cls": "distributed.Worker", "opts": {**(options or {}), "name": name}})
            self.process: asyncio.subprocess.Process | None = None
            self._kept: asyncio.Task | None = None

        async def start(self) -> None:
            await self._launch()
            self._kept = asyncio.ensure_future(self._keep())
            await super().start()

        async def _launch(self) -> None:
            quiet = None if self.verbose else subprocess.DEVNULL
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "distributed.cli.dask_spec", self.scheduler, "--spec", self.spec,
                stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet)

        async def _keep(self) -> None:
            while self.process is not None:
                await self.process.wait()
                if self.status != Status.running:
                    return
                await asyncio.sleep(RESTART_SECONDS)  # a worker that cannot start does not spin
                if self.status == Status.running:
                    await self._launch()

        async def close(self) -> None:
            self.status = Status.closing
            if self._kept is not None:
                self._kept.cancel()
            if self.process is not None and self.process.returncode is None:
                self.process.terminate()  # the worker closes (its scratch folder removed), else it is killed
                try:
                    await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
                except asyncio.TimeoutError:
                    self.process.kill()
                    await self.process.wait()
            await super().close()

    return WorkerProcess


@contextmanager
def dask_logs(verbose: bool) -> Iterator[None]:
    """Dask's own log lines in this process hidden for the block (shown with verbose): the user reads localragas's
    lines (EngineError, exit 8), not Dask's internals."""
    if verbose:
        yield
        return
    known = logging.root.manager.loggerDict  # Dask gives some of its loggers a level of their own (distributed.client)
    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS] + [
        lg for name, lg in known.items() if isinstance(lg, logging.Logger) and lg.level != logging.NOTSET
        and name.split(".")[0] in _DASK_LOGGERS and name not in _DASK_LOGGERS]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():  # Dask's warnings too ("Port 8787 is already in use", slow scratch folders)
            for where in _DASK_WARNS_FROM:
                warnings.filterwarnings("ignore", module=where)
            yield
    finally:
        for lg, level in zip(loggers, before):
            lg.setLevel(level)
