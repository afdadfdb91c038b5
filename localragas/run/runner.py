"""evaluate(): run every metric on every sample, never losing one sample's result to another's failure. The run is built
once (run/prepared_run.py prepare), then scored on its engine (run/engines.py) and its report gated once (run/regate.py
gate_report), with people's spot checks when labels are given."""
from __future__ import annotations

import hashlib
import platform
import time
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from .. import __version__
from ..core.errors import ConfigError, JudgeCheckError
from ..data.language import scope_of
from ..data.sample_text import with_text
from ..data.schema import Gate, Report, Sample, SampleResult, SkippedRow
from ..judges import Judge
from ..judges.embeddings import CachedEmbedder, Embedder, get_embedder
from ..judges.judging import Judging
from ..metrics import Metric
from ..metrics.base import uncalibrated
from ..prompts.overrides import PromptOverrides, template_hashes
from .canaries import Tally, plan as canary_plan
from .checkpoint import Checkpoint, sample_hash
from .engine_base import CanaryEntry, Entry, Scored, Todo
from .engines import open_engine
from .judge_check import failure_message, scoring_stats
from .judging_context import graded_hashes
from .prepared_run import PreparedRun, check_cache_choice, prepare
from .progress import progress_for
from .regate import IN_PYTHON, gate_report
from .results import RunResults
from .settings import OF_A_DATA_RUN, RunSettings, refuse


def evaluate(samples: Any, settings: RunSettings | None = None, *, judge: Judge | Judging | str | None = None,
             embedder: Embedder | str | None = None, skipped: list[SkippedRow] | None = None,
             checkpoint: Checkpoint | str | Path | None = None, **overrides: Any) -> Report:
    """Score samples with the RAGAS metrics and apply the quality gate.

    samples: Sample objects, dicts, a pandas DataFrame, a datasets.Dataset, a ragas EvaluationDataset, or a file
    path (localragas.data.sample_inputs.as_samples); field names as in files (ragas's, deepeval's too). Refused with
    a DatasetError (a ValueError) before any judge call: an input with no sample, a name that is a near miss of a
    field the data lacks ("refrence" and no reference), and a metric given by name in `metrics` that needs a field
    no sample has (context_recall and no reference). The other names no field reads: report.meta["ignored_fields"].
    settings: a RunSettings (run/settings.py: each setting's meaning, type, default and bounds; e.g.
    localragas.load_settings() for the project's localragas.toml); default: the library's defaults.
    overrides: any setting by name, over `settings` (a table merged key by key): metrics (names, or Metric objects),
    metric_options, thresholds, gate, gate_on, max_error_rate, language, columns, judge_options, cache, cache_dir
    (the run opens the cache and closes it when it ends), progress (None: a bar in a notebook or an interactive
    session only), prompts (this run's, not the judge's), judge_check, sample_text (False: the report keeps no
    sample text, report.meta["sample_text"]), concurrency (results keep the input order;
    an in-process judge gets 1), engine and address (where samples are scored: "local" threads, or "dask" on the
    workers of the Dask scheduler at address, "local:N" for N worker processes here; run/engines.py), verbose
    (Dask's own log lines shown, hidden by default). An unknown
    name or a bad value: ConfigError naming it; the settings of a run over a data file (limit, shard, skip_invalid,
    resume, max_input_bytes) are run_eval's.
    judge / embedder: an instance, a catalogue name or path, or None for the settings' (the embedder is only loaded
    when a chosen metric needs it). A Judge instance was built with the settings' judge_options: only a
    judge_options keyword's "calibration" applies to it; it is never changed. A Judging (run_judging's, not yet
    cached: run_eval's, which keyed its checkpoint by it) is the run's judging context as it is: the settings' judge,
    judge_options and prompts are not read.
    checkpoint: a file each finished sample is appended to; results found there for unchanged samples are reused.
    """
    if settings is not None and not isinstance(settings, RunSettings):  # evaluate(samples, ["faithfulness"]) of old
        raise ConfigError(f"evaluate(): settings must be a RunSettings, got {type(settings).__name__} (give the "
                          "metrics as metrics=[...])")
    refuse(overrides, OF_A_DATA_RUN, "evaluate()", "applies to a run over a data file (run_eval, localragas eval)")
    named = {k: v for k, v in (("judge", judge), ("embedder", embedder)) if isinstance(v, str)}
    s = (settings or RunSettings()).over({**overrides, **named}, "evaluate()")
    check_cache_choice(overrides.get("cache", True), overrides.get("cache_dir"))  # both given: which?
    return run_prepared(prepare(samples, s, judge=judge if isinstance(judge, (Judge, Judging)) else None,
                                judge_options=overrides.get("judge_options"),
                                embedder=embedder if isinstance(embedder, Embedder) else None,
                                skipped=skipped, checkpoint=checkpoint))


def run_prepared(run: PreparedRun) -> Report:
    """A prepared run scored and its report gated: its cache open and its checkpoint held meanwhile (another live run
    of it is refused, CheckpointError, not resumed); with labels (the setting), people's spot checks of its items
    attached before the gate, which reads them."""
    s = run.settings
    held = run.checkpoint.held() if run.checkpoint else nullcontext()
    with run.judging.cached(s.cache, s.cache_dir if s.cache else None), held:
        report = _scored(run)
    if s.labels:  # people's spot checks of this run's items, and the gate read from them
        from ..quality.spot_checks import read_label_files, spot_checks  # noqa: PLC0415 - see import rules

        block = spot_checks(report, read_label_files(s.labels), files=s.labels, samples=run.given)
        report = report.model_copy(update={"spot_checks": block})
    report = gate_report(report, run.thresholds, report.meta["threshold_origins"], gate_on=s.gate_on, enabled=s.gate,
                         max_error_rate=s.max_error_rate)
    ignored = getattr(run.given, "ignored", None)
    if ignored:
        report.meta["ignored_fields"] = list(ignored)  # listed once: the terminal, Markdown, HTML show it
    if s.name or s.tags:  # the run history's name and tags, in every report of the run
        report.meta["run"] = {k: v for k, v in (("name", s.name), ("tags", list(s.tags))) if v}
    if s.history:  # localragas eval records its run once its reports are written (Evaluation.record)
        from .history_record import record_run  # noqa: PLC0415

        record_run(report, samples=run.given)
    return report


def prompt_meta(chosen: list[Metric], families: list[str], overrides: PromptOverrides | None) -> dict[str, Any]:
    """report.meta["prompts"]: the template sha256 of each family the run asks (PreparedRun.families), as used, with
    every hash a calibration of the metrics' graded verdicts records (graded_hashes: e.g. support_examples,
    null_statements), and the files of the overridden ones."""
    own = {p: m.template for m in chosen if m.template is not None for p in m.prompts}
    hashes = template_hashes(families, overrides, own)
    for graded in graded_hashes(chosen, overrides).values():
        hashes.update(graded)
    return {"sha256": dict(sorted(hashes.items())), "overridden": dict(overrides.sources) if overrides else {}}


def _scored(run: PreparedRun) -> Report:
    """The run's samples scored (those its checkpoint holds taken from it), its report not yet gated: its judging
    context's cache open."""
    s, samples, chosen, judging, checkpoint = run.settings, run.samples, run.metrics, run.judging, run.checkpoint
    names = [m.name for m in chosen]
    finished = checkpoint.finished() if checkpoint else None  # where each finished sample's line is, not its result
    embedder = run.embedder
    if any(m.uses_embedder for m in chosen) and not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    if judging.cache is not None and isinstance(embedder, Embedder) and not isinstance(embedder, CachedEmbedder):
        embedder = CachedEmbedder(embedder, judging.cache)

    collected = RunResults(len(samples), names, judging.stats.counters())  # on disk past SPILL_AFTER samples
    todo = Todo(samples)  # positions: each sample read again when scored (a LazySamples from its file)
    resumed = 0
    emb = embedder.inner if isinstance(embedder, CachedEmbedder) and s.engine != "local" else embedder
    with open_engine(s, judging, chosen, emb if isinstance(emb, Embedder) else None) as engine:
        check = engine.check(samples, s.judge_check)  # before any sample is scored
        if check["status"] == "failed":
            raise JudgeCheckError(failure_message(check, judging.name))
        started_at = datetime.now(timezone.utc)
        t0 = time.perf_counter()
        with progress_for(len(samples), s.progress) as bar:

            def finish(i: int, sample: Sample, digest: str | None, result: SampleResult) -> None:
                result = with_text(result, sample if s.sample_text else None)  # resumed ones too: as this run keeps
                collected.put(i, result)
                if checkpoint and digest is not None:
                    checkpoint.append(digest, result)
                bar.advance(result.id)  # the sample's id

            seed = hashlib.sha256()  # the run's canaries are drawn from its samples' hashes (run/canaries.py)
            with finished or nullcontext():  # an empty checkpoint (or none): nothing to take, no file opened
                for i, sample in enumerate(samples):
                    digest = sample_hash(sample)
                    seed.update(digest.encode())
                    previous = finished.take(sample.id, digest) if finished else None  # read from its line
                    if previous is not None:
                        resumed += 1
                        finish(i, sample, None, previous)  # already in the checkpoint
                    else:
                        todo.add(i)
            todo.mix(canary_plan(check, chosen, seed.hexdigest(), len(todo)))  # asked among the samples to score
            tally = Tally(list(todo.canaries), check, chosen)

            def route(entry: Entry, result: Scored) -> None:
                if isinstance(entry, CanaryEntry):  # a canary task: its answers, never a sample
                    tally.record(entry.canary, result)
                else:
                    finish(entry.position, entry.sample, entry.digest, cast(SampleResult, result))

            engine.score(todo, route)  # the samples not in the checkpoint, on the run's engine (run/engines.py)
    results = collected.done()
    wall = time.perf_counter() - t0
    canaries = tally.meta()
    # the scoring's: the check and the canaries count their own (meta.judge_check, meta.canaries)
    scored = scoring_stats(judging.stats.as_dict(), check, canaries)

    meta = {
        "localragas": __version__,
        "python": platform.python_version(),
        "started": started_at.isoformat(timespec="seconds"),
        "wall_seconds": round(wall, 3),
        "samples": len(samples),
        "concurrency": engine.concurrency,
        **({"engine": engine.describe()} if engine.describe() else {}),
        "language": s.language,
        "sample_text": s.sample_text,
        "languages": _languages(samples),
        "metric_options": {m.name: dict(m.options) for m in chosen if m.options},
        "resumed_samples": resumed,
        "judge": judging.describe(),
        "judge_check": check,
        "canaries": canaries,
        "calibration": judging.calibration.describe() if judging.calibration else None,
        "uncalibrated": uncalibrated(chosen, run.covered),
        "judge_stats": scored,
        "judge_totals": collected.totals(results),
        "share_of_wall_in_judge": round(scored["seconds"] / wall, 4) if wall > 0 else None,
        "judge_cache": str(judging.cache.path) if judging.cache else None,
        "embedder": embedder.describe() if isinstance(embedder, Embedder) else None,
        "thresholds": run.thresholds,
        "threshold_origins": {k: s.threshold_origins.get(k, IN_PYTHON) for k in s.thresholds if k in names},
        "prompts": prompt_meta(chosen, run.families, judging.prompts),
        "versions": _versions(),
    }
    report = Report(meta=meta, metrics=names, definitions={m.name: m.describe() for m in chosen},
                    gate=Gate(enabled=s.gate, passed=True, max_error_rate=s.max_error_rate),
                    samples=results, skipped=run.skipped)
    return report  # gated by run_prepared, once spot checks are attached


def _languages(samples: list[Sample]) -> dict[str, int]:
    """report.meta["languages"]: the language each sample's script says (ja, ko: asked in English) -> samples."""
    counts: dict[str, int] = {}
    for sample in samples:
        detected = scope_of(sample).detected
        counts[detected] = counts.get(detected, 0) + 1
    return dict(sorted(counts.items()))


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    out = {}
    for pkg in ("llama-cpp-python", "sentence-transformers", "torch", "pydantic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out
