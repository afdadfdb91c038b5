"""The local engine (the default): a run's samples scored in this process, in threads (`--concurrency`); one at a time
in the calling thread when it is 1."""
from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..data.schema import Sample
from ..judges.embeddings import Embedder
from .engine_base import Engine, Entry, Finish, Item, Scored, SerialisedEmbedder, Todo
from .judge_check import run_check
from .scoring import score_item

if TYPE_CHECKING:
    from ..judges import Judge
    from ..judges.judging import Judging
    from ..metrics import Metric

log = logging.getLogger("localragas")

IN_FLIGHT_PER_WORKER = 4  # samples handed to the local engine's threads at once, per thread


class LocalEngine(Engine):
    """Threads in this process: `concurrency` samples at once (an in-process judge that serves one call at a time:
    one); one sample at a time in the calling thread when it is 1."""

    def __init__(self, concurrency: int, judging: "Judging", metrics: list["Metric"], embedder: Embedder | None):
        self.concurrency = _workers(concurrency, judging.judge)
        self.judging, self.metrics = judging, metrics
        self.embedder = SerialisedEmbedder(embedder) if embedder is not None and self.concurrency > 1 else embedder

    def check(self, samples: list[Sample], enabled: bool) -> dict[str, Any]:
        return run_check(self.judging, self.metrics, samples, enabled=enabled)

    def score(self, todo: Todo, finish: Finish) -> None:
        def one(item: Item) -> Scored:
            return score_item(item, self.metrics, self.judging, self.embedder)

        if self.concurrency == 1:
            for entry in todo:
                finish(entry, one(entry.item))
        elif todo:
            _score_in_threads(todo, self.concurrency, finish, one)


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
    futures: dict[Future, Entry] = {}  # in flight: at most workers * IN_FLIGHT_PER_WORKER
    waiting = iter(todo)
    try:
        while True:
            for entry in islice(waiting, workers * IN_FLIGHT_PER_WORKER - len(futures)):
                futures[pool.submit(one, entry.item)] = entry
            if not futures:
                break
            for f in wait(futures, return_when=FIRST_COMPLETED).done:
                finish(futures.pop(f), f.result())
    except BaseException:
        for f in futures:
            f.cancel()
        for f, entry in futures.items():
            if f.cancelled():
                continue
            try:
                result = f.result()
            except BaseException:  # noqa: BLE001 - the first error is the one re-raised
                continue
            finish(entry, result)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
