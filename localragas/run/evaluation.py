"""A run of `localragas eval` as a library call: RunSpec holds every setting, spec_from_flags layers them (flags over
localragas.toml over the defaults, in one place), run_eval(spec) loads the data, builds the judge, embedder, cache and
checkpoint, shards, evaluates and fills the report's metadata (dataset, its digest, shard, settings file).

    spec = spec_from_flags("data.jsonl", judge="fake", embedder="fake", threshold=["faithfulness=0.8"])
    report = run_eval(spec)

The command line, scripts and tests run the same steps: `localragas eval` parses its flags into spec_from_flags,
runs Evaluation(spec) and writes the outputs before the checkpoint is removed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..core import paths
from .config import Settings, load_settings
from .gate import parse_thresholds
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES
from ..core.key_values import comma_items, parse_columns, parse_metric_options, parse_options, parse_prompts
from ..data.schema import Report


@dataclass(frozen=True)
class RunSpec:
    """Everything one run depends on; the defaults are the library's (spec_from_flags layers flags and a settings
    file over them)."""

    data: Path  # a str is taken as a path
    metrics: list[str] | None = None  # None: the four RAGAS core metrics
    metric_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)  # over each metric's default
    gate: bool = True
    gate_on: str = "mean"
    max_error_rate: float = 0.0
    judge: str | None = None  # None: the default judge
    judge_options: dict[str, Any] = field(default_factory=dict)  # with "calibration": FILE or "none"
    embedder: str | None = None  # None: the default embedder (loaded only for a metric that needs it)
    cache: bool = True  # the persistent judge cache: cache_dir, else .localragas/cache or $LOCALRAGAS_STATE_DIR/cache
    cache_dir: Path | None = None  # a str is taken as a path
    resume: bool = True  # a checkpoint under .localragas/runs, removed when the run is complete
    shard: tuple[int, int] | None = None  # (index, count), from 1
    language: str = "auto"
    concurrency: int = 1
    limit: int | None = None  # the first N samples (before sharding)
    skip_invalid: bool = False
    columns: dict[str, str] = field(default_factory=dict)  # field -> the data's column
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    progress: bool | None = None  # None: a bar in a notebook or an interactive session only
    config: str | None = None  # the settings file the spec was layered over, recorded in report.meta
    prompts: dict[str, str] = field(default_factory=dict)  # prompt family -> the file of its instruction text
    judge_check: bool = True  # the judge check before scoring (run/judge_check.py); False: skipped, for test setups

    def __post_init__(self) -> None:
        for name in ("data", "cache_dir"):
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, Path(getattr(self, name)))

    def cache_folder(self) -> Path | None:
        """The judge cache's folder, or None without a cache."""
        return cache_folder(self.cache, self.cache_dir)


def cache_folder(cache: bool = True, cache_dir: Path | None = None) -> Path | None:
    """The judge cache's folder as every command and the pytest plugin choose it: none without the cache, else
    cache_dir, else .localragas/cache (or $LOCALRAGAS_STATE_DIR/cache)."""
    return (cache_dir or paths.cache_dir()) if cache else None


def _first(*values):
    """The first value that is not None (a flag, then the config file, then the default)."""
    return next((v for v in values if v is not None), None)


def layered(settings: Settings, *, judge: str | None = None, judge_option: Iterable[str] = (),
            embedder: str | None = None, threshold: Iterable[str] = (), metric_option: Iterable[str] = (),
            max_input_bytes: int | None = None, prompt: Iterable[str] = ()) -> dict[str, Any]:
    """The settings `eval` and `calibrate` share, each flag over the settings file over the default: judge,
    judge_options, embedder, thresholds, metric_options, max_input_bytes and prompts (the names of RunSpec's
    fields)."""
    return {
        "prompts": parse_prompts(prompt, "--prompt", settings.prompts),
        "judge": judge or settings.judge,
        "judge_options": parse_options(judge_option, "--judge-option", settings.judge_options),
        "embedder": embedder or settings.embedder,
        "thresholds": parse_thresholds(threshold, settings.thresholds),
        "metric_options": parse_metric_options(metric_option, "--metric-option", settings.metric_options),
        "max_input_bytes": _first(max_input_bytes, settings.max_input_bytes, DEFAULT_MAX_INPUT_BYTES),
    }


def spec_from_flags(data: str | Path, *, config: str | Path | None = None, metrics: Iterable[str] = (),
                    metric_option: Iterable[str] = (), language: str | None = None, judge: str | None = None,
                    judge_option: Iterable[str] = (), embedder: str | None = None, threshold: Iterable[str] = (),
                    no_gate: bool = False, gate_on: str | None = None, max_error_rate: float | None = None,
                    limit: int | None = None, shard: str | None = None, skip_invalid: bool = False,
                    columns: Iterable[str] = (), max_input_bytes: int | None = None, concurrency: int = 1,
                    progress: bool | None = True, cache_dir: str | Path | None = None, no_cache: bool = False,
                    resume: bool = True, prompt: Iterable[str] = (), no_judge_check: bool = False) -> RunSpec:
    """A RunSpec from `localragas eval`'s flags (the same names and text forms: KEY=VALUE items, 'a,b' metric lists,
    'I/N' shards) over the settings file (config, else ./localragas.toml or [tool.localragas] in ./pyproject.toml)
    over the defaults. Malformed items are ConfigErrors naming the flag."""
    from .shard import parse_shard  # noqa: PLC0415

    settings = load_settings(Path(config) if config is not None else None)
    return RunSpec(
        data=data,
        **layered(settings, judge=judge, judge_option=judge_option, embedder=embedder, threshold=threshold,
                  metric_option=metric_option, max_input_bytes=max_input_bytes, prompt=prompt),
        metrics=comma_items(metrics) or settings.metrics,
        gate=not no_gate,
        gate_on=gate_on or settings.gate_on or "mean",
        max_error_rate=_first(max_error_rate, settings.max_error_rate, 0.0),
        cache=not no_cache,
        cache_dir=cache_dir,
        resume=resume,
        shard=parse_shard(shard) if shard else None,
        language=language or settings.language or "auto",
        concurrency=concurrency,
        limit=limit,
        skip_invalid=skip_invalid,
        columns=parse_columns(columns, "--columns", settings.columns),
        progress=progress,
        config=settings.source,
        judge_check=not no_judge_check and settings.judge_check is not False,
    )


def checkpoint_key(spec: RunSpec, judge_fingerprint: str) -> str:
    """The resume checkpoint's name: what decides the run's results (the data, metrics, judge and its calibration:
    Judging.scoring_fingerprint, embedder, limit, skipping, shard, metric options, columns, and the built-in prompts the
    metrics so configured ask: prompts.digest, so a run resumed after an upgrade that changed one starts afresh)."""
    from .checkpoint import run_key  # noqa: PLC0415
    from ..metrics import get_metrics  # noqa: PLC0415
    from ..prompts.digest import metrics_digest  # noqa: PLC0415

    asked = metrics_digest(get_metrics(spec.metrics, spec.metric_options))
    return run_key(spec.data.resolve(), spec.metrics, judge_fingerprint, spec.embedder, spec.limit,
                   spec.skip_invalid, *([spec.shard] if spec.shard else []),
                   *([spec.metric_options] if spec.metric_options else []),
                   *([spec.columns] if spec.columns else []), asked)


class Evaluation:
    """One run of a spec: run() returns the report; finish() removes the checkpoint once the report is kept (the
    CLI writes its outputs first, so a failed write leaves the finished samples to resume from); close() lets the
    checkpoint go, held from run() on so that another live run of the same spec is refused, not resumed."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.checkpoint = None  # the resume checkpoint (a localragas.run.checkpoint.Checkpoint), once run() made it

    def run(self) -> Report:
        from .. import models  # noqa: PLC0415
        from .checkpoint import Checkpoint  # noqa: PLC0415
        from ..data.dataset import load_samples  # noqa: PLC0415
        from ..judges import get_judge  # noqa: PLC0415
        from ..judges.calibrated import run_options  # noqa: PLC0415
        from .runner import evaluate, run_judging  # noqa: PLC0415
        from .shard import take_shard  # noqa: PLC0415
        from ..metrics import get_metrics  # noqa: PLC0415
        from ..data.field_check import refuse_unscorable  # noqa: PLC0415

        spec = self.spec
        samples, skipped = load_samples(spec.data, skip_invalid=spec.skip_invalid,
                                        max_input_bytes=spec.max_input_bytes, columns=spec.columns)
        if spec.limit:
            samples = samples[:spec.limit]
        total = len(samples)
        # a metric asked for by name that no row can score: refused before the judge loads (evaluate() would too)
        refuse_unscorable(samples, get_metrics(spec.metrics, spec.metric_options), named=spec.metrics)
        if spec.shard:
            shard, positions = take_shard(samples, *spec.shard)
            samples = samples.part(shard)  # evaluate() checks the input, not this shard (which may be empty)
        judge = get_judge(spec.judge, dict(spec.judge_options))
        try:
            if spec.resume:  # the key holds what the run's judging holds: Judging.scoring_fingerprint
                fingerprint = run_judging(judge, run_options(spec.judge_options), spec.prompts).scoring_fingerprint
                self.checkpoint = Checkpoint(paths.runs_dir() / f"{checkpoint_key(spec, fingerprint)}.jsonl")
                self.checkpoint.lock()  # held until finish() or close(): the outputs are written under it
            cache = spec.cache_folder()
            report = evaluate(samples, metrics=spec.metrics, judge=judge, embedder=spec.embedder,
                              judge_options=run_options(spec.judge_options), thresholds=spec.thresholds,
                              gate=spec.gate, progress=spec.progress, skipped=skipped,
                              cache_dir=cache, cache=cache is not None, checkpoint=self.checkpoint,
                              gate_on=spec.gate_on, concurrency=spec.concurrency, language=spec.language,
                              metric_options=spec.metric_options, max_error_rate=spec.max_error_rate,
                              prompts=spec.prompts, judge_check=spec.judge_check)
        except BaseException:
            self.close()
            raise
        finally:
            judge.close()
        report.meta["dataset"] = str(spec.data)
        report.meta["dataset_sha256"] = models.dataset_sha256(spec.data)
        if spec.shard:
            index, count = spec.shard
            report.meta["shard"] = {"index": index, "count": count, "total": total, "positions": positions}
        if spec.config:
            report.meta["config"] = spec.config
        return report

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
        run.finish()
    finally:
        run.close()
    return report
