"""The Dask engine's driver (the optional extra `localragas[dask]`; run/engine_base.py is the interface, run/dask_worker.py
the workers' side). The driver connects to a scheduler (or starts a LocalCluster of local:N), gives the workers the run
(a worker plugin builds the judge and embedder once per worker process), asks one worker the judge check, then streams
batches of samples tagged with their dataset positions, a bounded number in flight, and hands each finished sample to
the run's `finish` (checkpoint, progress) in its own thread; the cache rows the workers wrote come back with each
batch and go into the driver's judge cache.

Faults: a batch whose worker died is re-run by Dask on another (the scheduler's allowed-failures); a batch Dask gives
up on (KilledWorker) is split and each sample sent alone, a sample Dask gives up on alone is sent once more with
nothing else in flight, and one that kills its worker then too ends as an error of that sample (every metric unscored
with the reason: the gate fails closed). The scheduler going away ends the run
with EngineError (exit 8); the finished samples are in the checkpoint, for the same command to resume.
"""
from __future__ import annotations

import asyncio
import logging
import platform
import time
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError, EngineError, MissingDependencyError
from ..data.schema import MetricResult, Sample, SampleResult
from .dask_local import START_SECONDS, dask_logs, local_cluster
from .dask_worker import Job, check_here, fingerprint, plugin, score_batch
from .engine_base import Engine, Entry, Finish, Item, Todo
from .judge_check import run_check

if TYPE_CHECKING:
    from ..judges.embeddings import Embedder
    from ..judges.judging import Judging
    from ..metrics import Metric

log = logging.getLogger("localragas")
IN_FLIGHT_PER_THREAD = 2  # batches sent ahead per worker thread: enough to keep workers busy, little lost to a crash
MAX_BATCH = 32  # samples per batch at most (a driver killed loses at most the batches in flight)
WATCH_SECONDS = 5.0  # with nothing finished for this long, the driver looks at the cluster (_watch)
NO_WORKER_SECONDS = 300.0  # a cluster with no worker for this long ends the run (EngineError, exit 8)


def import_distributed() -> Any:
    try:
        import distributed  # noqa: PLC0415 - the optional extra
    except ImportError as e:
        raise MissingDependencyError(f"--engine dask needs Dask distributed: pip install 'localragas[dask]' [{e}]") \
            from None
    return distributed


def connect_seconds() -> float:
    """How long the driver waits to reach a scheduler and see a worker: Dask's own connect timeout,
    distributed.comm.timeouts.connect (30 s unless set, e.g. DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s)."""
    import dask  # noqa: PLC0415
    from dask.utils import parse_timedelta  # noqa: PLC0415

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


def _handshake(distributed: Any, where: str, seconds: float) -> None:
    """Dask's first exchange with the scheduler, bounded by `seconds` as a whole: Dask's Client waits for the
    scheduler's handshake without a deadline, so that a server that accepts the connection and says nothing would
    hold the run forever. TimeoutError or OSError when there is no scheduler answering there."""
    from distributed.comm import connect  # noqa: PLC0415

    async def exchange() -> None:
        args = distributed.Security().get_connection_args("client")
        try:
            comm = await asyncio.wait_for(connect(where, timeout=seconds, **args), seconds)
        except asyncio.TimeoutError:  # not yet the built-in TimeoutError before Python 3.11
            raise TimeoutError(f"no answer from a Dask scheduler there within {seconds:g} s") from None
        await comm.close()

    def run() -> None:  # a loop of its own, in a thread: the caller may be inside one (a notebook)
        asyncio.run(exchange())

    with ThreadPoolExecutor(1, thread_name_prefix="localragas-dask-connect") as pool:
        pool.submit(run).result()


def _address(address: str | None) -> str:
    """The scheduler to use: --address, else Dask's own scheduler-address setting (DASK_SCHEDULER_ADDRESS)."""
    import dask  # noqa: PLC0415

    found = address or dask.config.get("scheduler-address", None)
    if not found:
        raise ConfigError("--engine dask needs the scheduler: --address tcp://HOST:8786 (a running `dask scheduler`), "
                          "or --address local:N for N worker processes on this machine (also `address` in "
                          "localragas.toml, or DASK_SCHEDULER_ADDRESS)")
    return found


class DaskEngine(Engine):
    name = "dask"

    def __init__(self, client: Any, address: str, judging: "Judging", metrics: list["Metric"],
                 embedder: "Embedder | None", run_id: str):
        self.client, self.address, self.judging, self.metrics = client, address, judging, metrics
        self.run_id = run_id
        self.expected = fingerprint(judging, metrics, embedder)
        self.threads = max(sum(client.nthreads().values()), 1)
        self.concurrency = self.threads
        self.retried = self.crashed = 0

    @classmethod
    @contextmanager
    def opened(cls, address: str | None, judging: "Judging", metrics: list["Metric"], embedder: "Embedder | None",
               verbose: bool = False) -> Iterator["DaskEngine"]:
        """Connected (a local:N cluster started), the run's plugin on every worker; all let go after the block.
        Dask's own log lines are hidden meanwhile unless verbose."""
        distributed = import_distributed()
        job = _job(judging, metrics, embedder)
        where = _address(address)
        run_id = uuid.uuid4().hex[:12]
        seconds = connect_seconds()
        with ExitStack() as stack:
            stack.enter_context(dask_logs(verbose))  # left last: the cluster's closing is quiet too
            try:
                if where.startswith("local:"):
                    workers = int(where.removeprefix("local:"))
                    cluster = stack.enter_context(local_cluster(workers, verbose))
                    client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
                    client.wait_for_workers(workers, timeout=START_SECONDS)
                else:
                    _handshake(distributed, where, seconds)
                    client = stack.enter_context(distributed.Client(where, timeout=seconds, set_as_default=False))
                    client.wait_for_workers(1, timeout=seconds)
                client.register_plugin(plugin(run_id, job), name=f"localragas-{run_id}")
            except (OSError, TimeoutError) as e:
                if where.startswith("local:"):
                    raise EngineError(f"the worker processes of {where} did not all start within {START_SECONDS} s "
                                      f"({type(e).__name__}: {e}); --verbose shows their output") from None
                raise EngineError(f"could not reach the Dask scheduler {where} or any worker of it within "
                                  f"{seconds:g} s ({type(e).__name__}: {e}): start `dask scheduler` and "
                                  "`dask worker`, or check --address") from None
            engine = cls(client, where, judging, metrics, embedder, run_id)
            try:
                yield engine
            finally:
                if client.status == "running":
                    try:
                        client.unregister_worker_plugin(f"localragas-{run_id}")  # the workers let the model go
                    except Exception:  # noqa: BLE001 - a cluster closing anyway
                        log.debug("could not remove the localragas plugin from the Dask workers", exc_info=True)

    def describe(self) -> dict[str, Any]:
        return {"name": "dask", "address": self.address, "worker_threads": self.threads,
                "retried_samples": self.retried, "crashed_samples": self.crashed}

    def check(self, samples: list[Sample], enabled: bool) -> dict[str, Any]:
        """The judge check, asked on one worker (the driver never loads the model for it): one sample per language."""
        from ..data.language import scope_of  # noqa: PLC0415

        if not enabled:
            return run_check(self.judging, self.metrics, samples, enabled=False)
        one = list({scope_of(s).lang: s for s in samples}.values())
        future = self.client.submit(check_here, self.run_id, self.expected, one, enabled, pure=False)
        out = self._result(future)
        self._keep(out)
        check = out["check"]
        spent = {k: check.get(k, 0) for k in ("calls", "cache_hits", "failed_calls", "parse_failures",
                                               "prompt_tokens", "completion_tokens", "cached_tokens")}
        self.judging.add({**spent, "seconds": check.get("judge_seconds", 0.0)})  # the run's totals hold the check's
        return check

    def score(self, todo: Todo, finish: Finish) -> None:
        size = max(1, min(MAX_BATCH, len(todo) // (self.threads * 4)))
        suspects: list[Entry] = []
        self._stream(deque(todo[k:k + size] for k in range(0, len(todo), size)), finish, suspects,
                     self.threads * IN_FLIGHT_PER_THREAD)
        for entry in suspects:  # each alone: no other task in flight may share the death of its worker
            self._stream(deque([[entry]]), finish, None, 1)

    def _stream(self, waiting: deque, finish: Finish, suspects: list | None, limit: int) -> None:
        """Send the batches of `waiting`, at most `limit` in flight, each finished one to _finished."""
        from distributed import wait  # noqa: PLC0415

        in_flight: dict[Any, list[Entry]] = {}
        idle_since: float | None = None  # when the cluster was last seen without a worker

        def send() -> None:
            while waiting and len(in_flight) < limit:
                batch = list(waiting.popleft())  # a Todo slice read now: only the batches in flight are held
                future = self.client.submit(score_batch, self.run_id, self.expected,
                                            [(k, entry.item) for k, entry in enumerate(batch)], pure=False)
                in_flight[future] = batch

        send()
        try:
            while in_flight:
                try:
                    with self.client.as_current():  # this run's client, not a default one
                        done = wait(list(in_flight), timeout=WATCH_SECONDS, return_when="FIRST_COMPLETED").done
                except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
                    idle_since = self._watch(idle_since)
                    continue
                except Exception as e:
                    if _cancelled(e):  # the scheduler's connection lost: Dask cancels every future
                        raise self._lost() from None
                    raise
                for future in done:
                    self._finished(future, in_flight.pop(future), waiting, finish, suspects)
                send()
        finally:
            for future in in_flight:
                future.cancel()

    def _finished(self, future: Any, batch: list[Entry], waiting: deque, finish: Finish,
                  suspects: list | None) -> None:
        """A batch's task is over: its results to `finish`, its cache rows kept. A batch Dask gave up on (the
        workers running it died each time: KilledWorker) goes back into `waiting` sample by sample; a lone sample so
        given up on is a suspect (another task on its worker may have been the killer), sent again alone later;
        a suspect that kills its worker alone (suspects None) is an error of that sample."""
        if future.status == "error" and _killed(future.exception()):
            if len(batch) > 1:  # each of its samples alone, so that a bad one is found and the others scored
                self.retried += len(batch)
                waiting.extendleft(reversed([[entry] for entry in batch]))
            elif suspects is not None:
                suspects.append(batch[0])
            else:
                entry = batch[0]
                self.crashed += 1
                log.warning("sample %s crashed every Dask worker it was sent to: recorded as an error", entry.item.id)
                finish(entry, crashed(entry.item, self.metrics, future.exception()))
            return
        out = self._result(future)
        self._keep(out)
        for k, result in out["results"]:  # keyed by the entry's place in the batch
            self.judging.add(result.judge)
            finish(batch[k], result)
        self.judging.add({}, out["errors"])

    def _watch(self, idle_since: float | None) -> float | None:
        """Nothing finished for a while: the scheduler gone, or no worker for NO_WORKER_SECONDS, ends the run."""
        if self.client.status not in ("running", "connecting"):
            raise self._lost()
        if self.client.nthreads():
            return None
        now = time.monotonic()
        if idle_since is not None and now - idle_since >= NO_WORKER_SECONDS:
            raise EngineError(f"the Dask cluster at {self.address} has had no worker for {NO_WORKER_SECONDS:.0f} s: "
                              "the samples finished so far are in the resume checkpoint; start workers and run the "
                              "same command again (on any engine) to go on from them")
        return idle_since if idle_since is not None else now

    def _result(self, future: Any) -> dict[str, Any]:
        """A task's result, waited for under the watch (_watch); its own error re-raised (a ConfigError, a worker
        refused for its fingerprint); the scheduler gone: EngineError."""
        idle_since = None
        while True:
            if future.status == "cancelled" or self.client.status not in ("running", "connecting"):
                raise self._lost()
            try:
                return future.result(timeout=WATCH_SECONDS)
            except (TimeoutError, asyncio.TimeoutError):
                idle_since = self._watch(idle_since)
            except Exception as e:
                if _cancelled(e):
                    raise self._lost() from None
                raise

    def _lost(self) -> EngineError:
        return EngineError(f"the Dask scheduler {self.address} went away mid-run: the samples finished so far are in "
                           "the resume checkpoint; run the same command again (on any engine) to go on from them")

    def _keep(self, out: dict[str, Any]) -> None:
        """The cache rows and vectors a task's calls wrote, into the driver's judge cache."""
        cache = self.judging.cache
        if cache is None:
            return
        for row in out["rows"]:
            cache.put(*row)
        for key, vector in out["vectors"]:
            cache.put_vector(key, vector)


def _cancelled(error: BaseException) -> bool:
    """Dask's errors for futures cancelled under us (the scheduler gone), by name: their module moved across versions."""
    return type(error).__name__ in ("FutureCancelledError", "FuturesCancelledError", "CancelledError",
                                    "CommClosedError")


def _killed(error: BaseException | None) -> bool:
    return type(error).__name__ == "KilledWorker"


def crashed(sample: Item, metrics: list["Metric"], error: BaseException | None) -> SampleResult:
    """A sample that killed every worker it was sent to: each metric unscored with the reason (an error: the gate
    fails closed); a task of canaries so: its reason (run/canaries.py Tally.record counts it unanswered)."""
    why = f"error: the sample crashed every Dask worker it was sent to ({type(error).__name__}: {error})"[:500]
    out = SampleResult(id=sample.id or "", category=sample.category)
    for m in metrics:
        out.metrics[m.name] = MetricResult.unscored_because(why)
    return out


def _job(judging: "Judging", metrics: list["Metric"], embedder: "Embedder | None") -> bytes:
    """The run as the workers build it, pickled once. A Judge instance (not built from a name by the run) is pickled
    when it can be; else ConfigError: give it by name or path."""
    import cloudpickle  # noqa: PLC0415

    judge = None
    name, options = judging.made_from or (None, {})
    if judging.made_from is None:
        try:
            judge = cloudpickle.dumps(judging.judge)
        except Exception as e:  # noqa: BLE001 - whatever stops pickling it
            raise ConfigError(f"--engine dask: the judge given ({judging.name}) cannot be sent to the workers "
                              f"({type(e).__name__}: {e}); give the judge by its catalogue name or model path "
                              "(judge=\"qwen2.5-1.5b\"), so that each worker loads its own") from None
    cache = judging.cache
    job = Job(judge_name=name, judge_options=dict(options), judge=judge, calibration=judging.calibration,
              prompts=judging.prompts, metrics=metrics, embedder=embedder,
              cache_folder=str(cache.folder.resolve()) if cache is not None else None,
              driver_host=platform.node())
    try:
        return cloudpickle.dumps(job)
    except Exception as e:  # noqa: BLE001
        raise ConfigError(f"--engine dask: the run cannot be sent to the workers ({type(e).__name__}: {e}); give the "
                          "embedder and metrics by name") from None
