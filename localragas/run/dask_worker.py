"""The Dask worker's side of a run (run/dask_engine.py is the driver's): a worker plugin builds the run's judging
context and embedder once per worker process, and the tasks score batches of samples with them, each batch's
result carrying the judge cache rows its calls wrote, for the driver's cache.

A worker's fingerprint (the judge's: model sha256 and decoding settings; the calibration's and prompt overrides'
sha256; the embedder; the localragas version and the built-in prompts' digest) is checked in every task against the
driver's before anything is scored: a worker that would score differently is refused, never mixed into the report.
Nothing here is imported by the driver unless the run is on Dask; workers import it by reference (localragas must be
installed on them, the same version).
"""
from __future__ import annotations

import platform
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .. import __version__
from ..core.errors import LocalragasError

_RUNS: dict[str, "WorkerRun"] = {}  # run id -> this worker process's part of the run, set up by RunPlugin


class FingerprintMismatch(LocalragasError):
    """A worker that would score differently from the driver: it differs in `what` (driver's, worker's)."""

    def __init__(self, worker: str, what: str, driver: Any, mine: Any):
        self.worker, self.what, self.driver, self.mine = worker, what, driver, mine
        super().__init__(f"cannot score on Dask worker {worker}: it differs from this run in {what} ({driver!r} vs "
                         f"{mine!r}); give every worker the same model files, judge options and localragas version")

    def __reduce__(self):
        return FingerprintMismatch, (self.worker, self.what, self.driver, self.mine)


@dataclass
class Job:
    """What a worker builds its part of a run from (cloudpickled once by the driver): the judge by name and backend
    options (judge_name, judge_options), else a pickled Judge instance; the driver's calibration (the one in effect:
    the run's judging context's, run/judging_context.py) and prompt overrides as objects (no file is needed on the worker); the metrics; the embedder (an
    instance, or None); the driver's cache folder and host (None: the run has no cache)."""

    judge_name: str | None
    judge_options: dict
    judge: Any
    calibration: Any
    prompts: Any
    metrics: list
    embedder: Any
    cache_folder: str | None
    driver_host: str


def fingerprint(judging: Any, metrics: list, embedder: Any) -> dict[str, Any]:
    """What must be the same on the driver and on every worker for their scores to be one run's."""
    from ..prompts.digest import metrics_digest  # noqa: PLC0415

    return {"judge": judging.fingerprint,
            "calibration": judging.calibration.sha256 if judging.calibration is not None else None,
            "prompt overrides": judging.prompts.sha256 if judging.prompts else None,
            "embedder": embedder.describe().get("name") if embedder is not None else None,
            "localragas version": __version__,
            "built-in prompts": metrics_digest(metrics)}


class WorkerCache:
    """The judge cache as a worker sees it: reads from `base` (the driver's cache file when this worker runs on the
    driver's host, else this worker's own cache in its state folder); every row a call writes is kept to be handed
    back with the batch (take) and written into the driver's cache there; `writes`: also written into `base` (a
    worker's own cache, so a re-run on these workers is answered from it)."""

    def __init__(self, base: Any, writes: bool):
        self.base, self.writes = base, writes
        self.path = base.path
        self._rows: list[tuple] = []
        self._vectors: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()

    def get(self, key: str):
        return self.base.get(key)

    def put(self, *row: Any) -> None:
        with self._lock:
            self._rows.append(row)
        if self.writes:
            self.base.put(*row)

    def get_vector(self, key: str):
        return self.base.get_vector(key)

    def put_vector(self, key: str, vector: bytes) -> None:
        with self._lock:
            self._vectors.append((key, vector))
        if self.writes:
            self.base.put_vector(key, vector)

    def take(self) -> tuple[list[tuple], list[tuple[str, bytes]]]:
        with self._lock:
            rows, vectors, self._rows, self._vectors = self._rows, self._vectors, [], []
        return rows, vectors

    def error(self, *args: Any, **kwargs: Any):
        return self.base.error(*args, **kwargs)

    def close(self) -> None:
        self.base.close()


@dataclass
class WorkerRun:
    """A worker process's part of one run, built once by RunPlugin.setup; `failed`: why it could not be built (raised
    by every task of the run on this worker)."""

    judging: Any = None
    metrics: list = field(default_factory=list)
    embedder: Any = None
    fingerprint: dict = field(default_factory=dict)
    failed: BaseException | None = None


def build(job: Job) -> WorkerRun:
    """The judging context (its judge built here from the name, or unpickled), the cache and the embedder."""
    import cloudpickle  # noqa: PLC0415

    from ..core import paths  # noqa: PLC0415
    from ..judges import get_judge  # noqa: PLC0415
    from ..judges.cache import JudgeCache  # noqa: PLC0415
    from ..judges.embeddings import CachedEmbedder  # noqa: PLC0415
    from ..judges.judging import Judging  # noqa: PLC0415
    from .engine_base import SerialisedEmbedder  # noqa: PLC0415

    judge = cloudpickle.loads(job.judge) if job.judge is not None else get_judge(job.judge_name, job.judge_options)
    cache = None
    if job.cache_folder is not None:
        mine = platform.node() == job.driver_host and Path(job.cache_folder).is_dir()
        cache = WorkerCache(JudgeCache(job.cache_folder if mine else paths.cache_dir()), writes=not mine)
    judging = Judging(judge, cache=cast(Any, cache), prompts=job.prompts, calibration=job.calibration)
    embedder = job.embedder
    if embedder is not None and cache is not None:
        embedder = CachedEmbedder(embedder, cache)
    if embedder is not None:  # a worker with several threads: they take turns, as the local engine's do
        embedder = SerialisedEmbedder(embedder)
    return WorkerRun(judging, job.metrics, embedder, fingerprint(judging, job.metrics, job.embedder))


def _plugin_class():
    from distributed import WorkerPlugin  # noqa: PLC0415

    class RunPlugin(WorkerPlugin):
        """Builds a run's WorkerRun once in each worker process (and in a worker that joins or restarts later)."""

        def __init__(self, run_id: str, job: bytes):
            self.run_id, self.job = run_id, job

        def setup(self, worker: Any) -> None:
            from localragas.run import dask_worker  # noqa: PLC0415 - this class travels by value: the module's own state

            dask_worker.install(self.run_id, self.job)

        def teardown(self, worker: Any) -> None:
            from localragas.run import dask_worker  # noqa: PLC0415

            dask_worker.remove(self.run_id)

    return RunPlugin


def install(run_id: str, job: bytes) -> None:
    """A run's part in this worker process (RunPlugin.setup); a failure is kept, raised by each task of the run."""
    import cloudpickle  # noqa: PLC0415

    try:
        _RUNS[run_id] = build(cloudpickle.loads(job))
    except BaseException as e:  # noqa: BLE001 - raised by each task of the run here, to the driver
        _RUNS[run_id] = WorkerRun(failed=e)


def remove(run_id: str) -> None:
    """The run is over: its judge (the model) and cache let go in this worker process (RunPlugin.teardown)."""
    run = _RUNS.pop(run_id, None)
    if run is not None and run.judging is not None:
        run.judging.judge.close()
        if run.judging.cache is not None:
            run.judging.cache.close()


def plugin(run_id: str, job: bytes) -> Any:
    """The worker plugin of a run (a distributed.WorkerPlugin), named after it."""
    return _plugin_class()(run_id, job)


def _run_here(run_id: str, expected: dict[str, Any]) -> WorkerRun:
    """This worker's part of the run, checked against the driver's fingerprint before anything is scored."""
    run = _RUNS.get(run_id)
    if run is None:
        raise LocalragasError(f"Dask worker {_address()} has no localragas run {run_id} (its plugin did not run)")
    if run.failed is not None:
        raise run.failed
    for what, value in expected.items():
        if run.fingerprint.get(what) != value:
            raise FingerprintMismatch(_address(), what, value, run.fingerprint.get(what))
    return run


def _address() -> str:
    try:
        from distributed import get_worker  # noqa: PLC0415

        return str(get_worker().address)
    except (ImportError, ValueError):
        return platform.node()


def _counted(run: WorkerRun, before: int) -> tuple[list, list, list[str]]:
    rows, vectors = run.judging.cache.take() if run.judging.cache is not None else ([], [])
    return rows, vectors, run.judging.stats.errors[before:before + 20]


def _plain_errors(task):
    """A task's error as one the driver can read: a LocalragasError as it is, any other as a LocalragasError naming
    the worker, the type and the message (a deep traceback Dask could not send would leave the driver waiting)."""
    import functools  # noqa: PLC0415

    @functools.wraps(task)
    def run(*args: Any) -> Any:
        try:
            return task(*args)
        except LocalragasError:
            raise
        except Exception as e:  # noqa: BLE001
            raise LocalragasError(f"Dask worker {_address()}: {type(e).__name__}: {str(e)[:500]}") from None

    return run


@_plain_errors
def score_batch(run_id: str, expected: dict[str, Any], batch: list[tuple[int, Any]]) -> dict[str, Any]:
    """A Dask task: the items of `batch` ((key, a sample or a canary task, run/canaries.py), the key the driver's to
    find its entry by) scored here; their results by key, the cache rows and embedding vectors written meanwhile, and
    the judge errors met."""
    from .scoring import score_item  # noqa: PLC0415

    run = _run_here(run_id, expected)
    before = len(run.judging.stats.errors)
    results = [(k, score_item(item, run.metrics, run.judging, run.embedder)) for k, item in batch]
    rows, vectors, errors = _counted(run, before)
    return {"results": results, "rows": rows, "vectors": vectors, "errors": errors}


@_plain_errors
def check_here(run_id: str, expected: dict[str, Any], samples: list[Any], enabled: bool) -> dict[str, Any]:
    """A Dask task: the judge check (run/judge_check.py) on this worker's judge, for `samples`' languages; its
    result, with the cache rows its calls wrote."""
    from .judge_check import run_check  # noqa: PLC0415

    run = _run_here(run_id, expected)
    before = len(run.judging.stats.errors)
    check = run_check(run.judging, run.metrics, samples, enabled=enabled)
    rows, vectors, _ = _counted(run, before)
    return {"check": check, "rows": rows, "vectors": vectors}
