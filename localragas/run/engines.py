"""Where a run's samples are scored: the engine. `local` (the default) scores them in this process, in threads
(run/local_engine.py); `dask` on the workers of a Dask cluster (run/dask_engine.py, an optional extra). Either way the
driver, this process, keeps what makes the run correct: the dataset order, the checkpoint, the cache, the progress and
the gate. An engine (run/engine_base.py Engine) is opened for one run (open_engine), asked the judge check once before
any sample is scored (check), then given the samples to score (score), each finished one handed to
`finish(entry, result)` in the calling thread.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..judges.embeddings import Embedder
from .engine_base import Engine
from .local_engine import LocalEngine

if TYPE_CHECKING:
    from ..judges.judging import Judging
    from ..metrics import Metric
    from .settings import RunSettings


@contextmanager
def open_engine(settings: "RunSettings", judging: "Judging", metrics: list["Metric"],
                embedder: Embedder | None) -> Iterator[Engine]:
    """The run's engine (settings.engine), open for the block: a Dask cluster of local:N started and closed with it,
    a scheduler's workers given the run and let go after it. --address without --engine dask: ConfigError."""
    if settings.engine == "local":
        if settings.address is not None:
            raise ConfigError(f"--address {settings.address} is the Dask scheduler of --engine dask; the local engine "
                              "(the default) takes none: add --engine dask, or leave --address out")
        yield LocalEngine(settings.concurrency, judging, metrics, embedder)
        return
    from .dask_engine import DaskEngine  # noqa: PLC0415 - the optional extra, imported only when asked for

    with DaskEngine.opened(settings.address, judging, metrics, embedder, settings.verbose) as engine:
        yield engine
