"""Where a run's samples are scored: the engine. `local` (the default) scores them in this process, in threads;
`dask` on the workers of a Dask cluster (run/dask_engine.py, an optional extra). Either way the driver, this process,
keeps what makes the run correct: the dataset order, the checkpoint, the cache, the progress and the gate. An engine
is opened for one run (open_engine), asked the judge check once before any sample is scored (check), then given the
samples to score (score), each finished one handed to `finish(position, sample, digest, result)` in the calling
thread.
"""
from __future__ import annotations

import logging
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import islice
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError
from ..data.schema import Sample, SampleResult
from ..judges.embeddings import Embedder
from .canaries import Canary, CanaryAnswers
from .checkpoint import sample_hash
from .judge_check import run_check

if TYPE_CHECKING:
    from ..judges import Judge
    from ..judges.calibration_map import CalibrationMap
    from ..judges.judging import Judging
    from ..metrics import Metric
    from .settings import RunSettings

log = logging.getLogger("localragas")

Item = Sample | Canary  # what an engine scores: a sample, or a task of canaries (run/canaries.py), one like the other
Scored = SampleResult | CanaryAnswers  # what it hands back for each
Finish = Callable[[int, Item, "str | None", Scored], None]
IN_FLIGHT_PER_WORKER = 4  # samples handed to the local engine's threads at once, per thread


class Todo(Sequence[tuple[int, Item, "str | None"]]):
    """The samples a run scores, by their dataset positions (8 bytes each): each item, (position, sample, its hash
    for the checkpoint), is made when read, the sample read from `samples` (a LazySamples reads it from its file), so
    a run of a million samples never holds them all. A slice is a Todo of those positions. The run's canaries are mixed
    in among them (mix), each at the position -1 - its index in `canaries`, with no hash (it is not checkpointed)."""

    def __init__(self, samples: Sequence[Sample], positions: "array[int] | None" = None,
                 canaries: Sequence[Canary] = ()):
        self.samples, self.positions = samples, array("q") if positions is None else positions
        self.canaries = tuple(canaries)

    def add(self, position: int) -> None:
        self.positions.append(position)

    def mix(self, canaries: Sequence[Canary]) -> None:
        """The canaries among the samples to score, each after `slot` of them (the last at the end)."""
        self.canaries = tuple(canaries)
        at: dict[int, list[int]] = {}
        for k, c in enumerate(self.canaries):
            at.setdefault(min(c.slot, len(self.positions)), []).append(-1 - k)
        mixed = array("q")
        for n, i in enumerate(self.positions):
            mixed.extend(at.get(n, ()))
            mixed.append(i)
        mixed.extend(at.get(len(self.positions), ()))
        self.positions = mixed

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return Todo(self.samples, self.positions[k], self.canaries)
        return self._item(self.positions[k])

    def __iter__(self) -> Iterator[tuple[int, Item, "str | None"]]:
        for i in self.positions:
            yield self._item(i)

    def _item(self, i: int) -> tuple[int, Item, "str | None"]:
        if i < 0:
            return i, self.canaries[-1 - i], None
        sample = self.samples[i]
        return i, sample, sample_hash(sample)

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


class Engine:
    """One run's engine: where samples are scored."""

    name = "local"
    concurrency = 1  # samples scored at once (report.meta["concurrency"])

    def check(self, samples: list[Sample], enabled: bool) -> dict[str, Any]:
        """The judge check (run/judge_check.py), before any sample is scored: report.meta["judge_check"]."""
        raise NotImplementedError

    def score(self, todo: Todo, finish: Finish) -> None:
        """Score every sample of `todo`; `finish` runs in the calling thread for each, in any order."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any] | None:
        """report.meta["engine"] (None: the local engine, whose reports record none)."""
        return None


class LocalEngine(Engine):
    """Threads in this process: `concurrency` samples at once (an in-process judge that serves one call at a time:
    one); one sample at a time in the calling thread when it is 1."""

    def __init__(self, concurrency: int, judging: "Judging", metrics: list["Metric"], embedder: Embedder | None,
                 calibration: "CalibrationMap | None"):
        self.concurrency = _workers(concurrency, judging.judge)
        self.judging, self.metrics, self.calibration = judging, metrics, calibration
        self.embedder = SerialisedEmbedder(embedder) if embedder is not None and self.concurrency > 1 else embedder

    def check(self, samples: list[Sample], enabled: bool) -> dict[str, Any]:
        return run_check(self.judging, self.metrics, samples, enabled=enabled)

    def score(self, todo: Todo, finish: Finish) -> None:
        from .runner import score_item  # noqa: PLC0415 - the runner opens the engine

        def one(item: Item) -> Scored:
            return score_item(item, self.metrics, self.judging, self.embedder, self.calibration)

        if self.concurrency == 1:
            for i, sample, digest in todo:
                finish(i, sample, digest, one(sample))
        elif todo:
            _score_in_threads(todo, self.concurrency, finish, one)


@contextmanager
def open_engine(settings: "RunSettings", judging: "Judging", metrics: list["Metric"], embedder: Embedder | None,
                calibration: "CalibrationMap | None") -> Iterator[Engine]:
    """The run's engine (settings.engine), open for the block: a Dask cluster of local:N started and closed with it,
    a scheduler's workers given the run and let go after it. --address without --engine dask: ConfigError."""
    if settings.engine == "local":
        if settings.address is not None:
            raise ConfigError(f"--address {settings.address} is the Dask scheduler of --engine dask; the local engine "
                              "(the default) takes none: add --engine dask, or leave --address out")
        yield LocalEngine(settings.concurrency, judging, metrics, embedder, calibration)
        return
    from .dask_engine import DaskEngine  # noqa: PLC0415 - the optional extra, imported only when asked for

    with DaskEngine.opened(settings.address, judging, metrics, embedder, calibration, settings.verbose) as engine:
        yield engine


def _workers(concurrency: int, judge: "Judge") -> int:
    limit = judge.max_concurrency
    if limit is not None and concurrency > limit:
        log.warning("the %s judge serves %d call(s) at a time (the model runs in this process): concurrency %d "
                    "lowered to %d", judge.name, limit, concurrency, limit)
        return limit
    return concurrency


def _score_in_threads(todo: Todo, workers: int, finish: Finish, one: Callable[[Item], Scored]) -> None:
    """Score samples in `workers` threads; `finish` (checkpoint, progress) runs here, in the calling thread.

    If one sample stops the run (a ConfigError, Ctrl-C), samples not started are dropped and the ones in flight
    are awaited and checkpointed, so a resumed run does not judge them again.
    """
    pool = ThreadPoolExecutor(workers, thread_name_prefix="localragas")
    futures: dict[Future, tuple[int, Item, str | None]] = {}  # in flight: at most workers * IN_FLIGHT_PER_WORKER
    waiting = iter(todo)
    try:
        while True:
            for i, sample, digest in islice(waiting, workers * IN_FLIGHT_PER_WORKER - len(futures)):
                futures[pool.submit(one, sample)] = (i, sample, digest)
            if not futures:
                break
            for f in wait(futures, return_when=FIRST_COMPLETED).done:
                i, sample, digest = futures.pop(f)
                finish(i, sample, digest, f.result())
    except BaseException:
        for f in futures:
            f.cancel()
        for f, (i, sample, digest) in futures.items():
            if f.cancelled():
                continue
            try:
                result = f.result()
            except BaseException:  # noqa: BLE001 - the first error is the one re-raised
                continue
            finish(i, sample, digest, result)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class SerialisedEmbedder(Embedder):
    """One embed() at a time: the embedding model loads lazily and is small and fast; threads take turns."""

    def __init__(self, inner: Embedder):
        self.inner, self.name = inner, inner.name
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            return self.inner.embed(texts)

    def describe(self) -> dict:
        return self.inner.describe()
