"""A run of `localragas eval` as a library call: RunSpec is the data file and its settings (RunSettings,
run/settings.py), spec_from_flags layers them (flags over localragas.toml over the defaults, RunSettings.over),
run_eval(spec) loads the data, shards it, builds the run once (run/prepared_run.py prepare: the metrics, the judge,
the checkpoint keyed by them, the calibration in effect), scores it (run/runner.py run_prepared) and fills the
report's metadata (dataset, its digest, shard, settings file).

    spec = spec_from_flags("data.jsonl", judge="fake", embedder="fake", threshold=["faithfulness=0.8"])
    report = run_eval(spec)

The command line, scripts and tests run the same steps: `localragas eval` parses its flags into spec_from_flags,
runs Evaluation(spec) and writes the outputs before the checkpoint is removed.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import paths
from ..core.errors import ConfigError
from .config import find_config, load_eval
from .settings import EvalIO, RunSettings, cache_folder, flag_of, flagged, from_flags, key_parts  # noqa: F401
from ..data.schema import Report

if TYPE_CHECKING:
    from ..judges.judging import Judging
    from ..metrics import Metric
    from .checkpoint import Checkpoint


class RunSpec(RunSettings):
    """A run over a data file: its path and its settings (RunSettings, the library's defaults;
    spec_from_flags layers flags and a settings file over them). RunSpec("data.jsonl", judge="fake", limit=3)."""

    data: Path  # a str is taken as a path
    eval: str | None = None  # the settings file's [evals.NAME] this run is (report.meta["eval"]); not a setting

    def __init__(self, data: str | Path | None = None, /, **settings: Any):
        super().__init__(**({"data": data} if data is not None else {}), **settings)


def spec_from_flags(data: str | Path | None = None, *, config: str | Path | None = None,
                    eval: str | None = None, **flags: Any) -> RunSpec:  # noqa: A002
    """A RunSpec from `localragas eval`'s flags (the same names and text forms, keyed as click names them:
    judge_option=["n_ctx=4096"], threshold=["faithfulness=0.8"], no_gate=True, shard="2/4", metrics=["a,b"]) over the
    settings file (config, else ./localragas.toml or [tool.localragas] in ./pyproject.toml; its [evals.`eval`] table
    over its top-level keys) over the defaults; data: else the file's `data`. Malformed items are ConfigErrors naming
    the flag. The outputs' flags (out, html, mlflow, …) are the command's to act on: eval_from_flags gives them."""
    return eval_from_flags(data, config=config, eval=eval, **flags)[0]


def eval_from_flags(data: str | Path | None = None, *, config: str | Path | None = None, eval: str | None = None,
                    **flags: Any) -> tuple[RunSpec, EvalIO]:  # noqa: A002
    """spec_from_flags, and what the eval writes (EvalIO: the reports, MLflow): its flags over the file's keys. No
    DATA and no `data` key: a ConfigError naming both ways to give it."""
    file_settings, file_io = load_eval(config, eval)
    io_dests = {flag.dest for name in flagged(EvalIO) if (flag := flag_of(name))}
    io = file_io.over(from_flags({k: flags.pop(k) for k in list(flags) if k in io_dests}, EvalIO), "flags")
    if data is None and io.data is None:
        found = config or find_config()
        where = f"a `data = \"…\"` key in {found}" + (f" [evals.{eval}]" if eval else "") if found else \
            "a `data = \"…\"` key in ./localragas.toml (or [tool.localragas] in ./pyproject.toml)"
        raise ConfigError(f"no data to evaluate: give DATA (localragas eval data.jsonl) or {where}")
    spec = RunSpec(data if data is not None else io.data, eval=eval,
                   **{k: getattr(file_settings, k) for k in RunSettings.model_fields})
    return spec.over(from_flags(flags), "flags"), io  # type: ignore[return-value]


def checkpoint_key(spec: RunSpec, judge_fingerprint: str, metrics: list[Metric] | None = None) -> str:
    """The resume checkpoint's name: what decides the run's results (the data, the settings marked InKey in
    RunSettings, the judge and its calibration: Judging.scoring_fingerprint, and the built-in prompts the metrics so
    configured ask: prompts.digest, so a run resumed after an upgrade that changed one starts afresh). metrics: the
    run's, as the spec chooses them (default: chosen here)."""
    from .checkpoint import run_key  # noqa: PLC0415
    from ..metrics import get_metrics  # noqa: PLC0415
    from ..prompts.digest import metrics_digest  # noqa: PLC0415

    asked = metrics_digest(metrics if metrics is not None else get_metrics(spec.metrics, spec.metric_options))
    return run_key(spec.data.resolve(), *key_parts(spec, judge_fingerprint), asked)


class Evaluation:
    """One run of a spec: run() returns the report; finish() removes the checkpoint once the report is kept (the
    CLI writes its outputs first, so a failed write leaves the finished samples to resume from); close() lets the
    checkpoint go, held from run() on so that another live run of the same spec is refused, not resumed."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.checkpoint = None  # the resume checkpoint (a localragas.run.checkpoint.Checkpoint), once run() made it

    def run(self) -> Report:
        from ..judges import catalogue  # noqa: PLC0415
        from ..data.dataset import load_samples  # noqa: PLC0415
        from .prepared_run import prepare  # noqa: PLC0415
        from .runner import run_prepared  # noqa: PLC0415
        from .shard_spec import shard_positions  # noqa: PLC0415

        spec = self.spec
        samples, skipped = load_samples(spec.data, skip_invalid=spec.skip_invalid,
                                        max_input_bytes=spec.max_input_bytes, columns=spec.columns)
        if spec.limit:
            samples = samples[:spec.limit]
        total = len(samples)
        if spec.shard:  # the run checks the input (a metric named that no row can score), not this shard
            positions = shard_positions(len(samples), *spec.shard)
            samples = samples.at(positions)
        judging = None
        try:
            # the run built once: its judging context keys the checkpoint (and on Dask each worker builds its own
            # judge from its name and options, Judging.made_from); the history records it with its outputs (record)
            run = prepare(samples, spec.over({"history": False}, "evaluate()"), skipped=skipped,
                          checkpoint=self._resume_checkpoint if spec.resume else None)
            judging = run.judging
            report = run_prepared(run)
        except BaseException:
            self.close()
            raise
        finally:
            if judging is not None:
                judging.judge.close()
        report.meta["dataset"] = str(spec.data)
        report.meta["dataset_sha256"] = catalogue.dataset_sha256(spec.data)
        if spec.shard:
            index, count = spec.shard
            report.meta["shard"] = {"index": index, "count": count, "total": total, "positions": positions}
        if spec.config:
            report.meta["config"] = spec.config
        if spec.eval:
            report.meta["eval"] = spec.eval
        return report

    def _resume_checkpoint(self, judging: Judging, metrics: list[Metric]) -> Checkpoint:
        """The resume checkpoint, keyed by the run's judging context (Judging.scoring_fingerprint) and metrics, held
        until finish() or close(): the outputs are written under it."""
        from .checkpoint import Checkpoint  # noqa: PLC0415

        key = checkpoint_key(self.spec, judging.scoring_fingerprint, metrics)
        self.checkpoint = checkpoint = Checkpoint(paths.runs_dir() / f"{key}.jsonl")
        checkpoint.lock()
        return checkpoint

    def record(self, report: Report, outputs: dict[str, Any] | None = None) -> int | None:
        """Add the run to the run history (unless the setting `history` is off), with the files written (format ->
        path): its id, or None (off, or the history could not be written: warned, the run unchanged)."""
        if not self.spec.history:
            return None
        from .history_record import record_run  # noqa: PLC0415

        return record_run(report, outputs=outputs)

    def finish(self) -> None:
        """The run is complete and its report kept: its checkpoint goes."""
        if self.checkpoint is not None:
            self.checkpoint.remove()

    def close(self) -> None:
        """The run is over, complete or not: its checkpoint is let go (kept, unless finish() removed it), so another
        run may resume it."""
        if self.checkpoint is not None:
            self.checkpoint.release()


def run_eval(spec: RunSpec) -> Report:
    """Run a spec to its report, as `localragas eval` does (without writing files); the checkpoint is removed."""
    run = Evaluation(spec)
    try:
        report = run.run()
        run.record(report)
        run.finish()
    finally:
        run.close()
    return report
