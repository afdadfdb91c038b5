"""evaluate(): run every metric on every sample, never losing one sample's result to another's failure."""
from __future__ import annotations

import hashlib
import logging
import platform
import time
import traceback
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, cast

from .. import __version__
from ..judge_calls import check_window
from ..judges.calibration_map import CalibrationMap
from ..data.metric_definition import GIVEN
from .checkpoint import Checkpoint, sample_hash
from ..judges.embeddings import CachedEmbedder, Embedder, get_embedder
from ..core.errors import CacheError, ConfigError, JudgeCheckError, JudgeError, MissingDependencyError, ModelLoadError
from .gate import people_reading, default_thresholds, run_gate
from .canaries import Canary, CanaryAnswers, Tally, failures as canary_failures, plan as canary_plan
from .judge_check import failure_message, flat_metrics, scoring_stats
from ..judges import Judge, get_judge
from ..judges.calibrated import calibration_of, run_calibration, split_calibration
from ..judges.judging import Judging
from ..data.field_check import refuse_unscorable
from ..data.language import scope_of
from ..data.lazy_samples import LazySamples
from ..metrics import Metric, all_metrics, get_metrics
from ..metrics.base import WithVerdicts, uncalibrated
from ..metrics.report_definitions import definitions_of
from .engines import Todo, open_engine
from .progress import progress_for
from .settings import OF_A_DATA_RUN, RunSettings, refuse, register_custom_metrics
from ..prompts.overrides import PromptOverrides, load_overrides, template_hashes
from ..judge_calls.sample_context import Scoring
from ..data.sample_text import with_text
from ..data.schema import Gate, MetricResult, Report, Sample, SampleResult, SkippedRow, calls_by_prompt
from .results import RunResults, columns_of
from .stats import categories_of, ci_settings, summarise_columns

log = logging.getLogger("localragas")


def score_sample(sample: Sample, metrics: list[Metric], judging: Judging, embedder: Embedder | None,
                 calibration: CalibrationMap | None = None) -> SampleResult:
    """All metrics on one sample (calibration: the map in effect, calibration_in_effect; None: the run's). A failing
    metric becomes unscored with its reason; the others go on."""
    started = time.perf_counter()
    ctx = Scoring(sample, judging, embedder, calibration)  # its own languages, shared work, call log: safe in parallel
    out = SampleResult(id=sample.id, category=sample.category)
    for m in metrics:
        try:
            out.metrics[m.name] = m.score(ctx)
        except JudgeError as e:
            out.metrics[m.name] = MetricResult.unscored_because(f"judge_error: {e}")
        except (ConfigError, MissingDependencyError, ModelLoadError, CacheError):
            raise  # wrong for every sample: stop the run with a clear message (finished samples are checkpointed)
        except Exception as e:  # noqa: BLE001 - one sample's bug must not lose the run
            log.debug("metric %s failed on %s:\n%s", m.name, sample.id, traceback.format_exc())
            out.metrics[m.name] = MetricResult.unscored_because(f"error: {type(e).__name__}: {e}")
    out.seconds = round(time.perf_counter() - started, 3)
    out.judge = {k: round(v, 3) for k, v in ctx.log.stats.counters().items()}
    out.judge_calls = int(out.judge["calls"])
    out.calls_by_prompt = calls_by_prompt(ctx.log.records)
    return out


def score_item(item: Sample | Canary, metrics: list[Metric], judging: Judging, embedder: Embedder | None,
               calibration: CalibrationMap | None = None) -> SampleResult | CanaryAnswers:
    """What an engine scores (run/engines.py Todo): a sample (score_sample), or a task of canaries, asked through the
    same judging context in the same stream (run/canaries.py)."""
    if isinstance(item, Canary):
        return item.ask(judging, metrics)
    return score_sample(item, metrics, judging, embedder, calibration)


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
    from ..data.sample_inputs import as_samples  # noqa: PLC0415

    if settings is not None and not isinstance(settings, RunSettings):  # evaluate(samples, ["faithfulness"]) of old
        raise ConfigError(f"evaluate(): settings must be a RunSettings, got {type(settings).__name__} (give the "
                          "metrics as metrics=[...])")
    refuse(overrides, OF_A_DATA_RUN, "evaluate()", "applies to a run over a data file (run_eval, localragas eval)")
    named = {k: v for k, v in (("judge", judge), ("embedder", embedder)) if isinstance(v, str)}
    s = (settings or RunSettings()).over({**overrides, **named}, "evaluate()")
    register_custom_metrics(s)
    embedder = embedder if isinstance(embedder, Embedder) else s.embedder
    samples = given = as_samples(samples, s.columns)  # a SampleList: the names no field read, the input of a shard
    if s.language != "auto":  # the sample field decides: its hash (resume) changes with it
        samples = (samples.with_language(s.language) if isinstance(samples, LazySamples)
                   else [x.model_copy(update={"language": s.language}) for x in samples])
    chosen = get_metrics(s.metrics, s.metric_options)
    refuse_unscorable(given, chosen, named=[n for n in s.metrics or () if isinstance(n, str)])
    check_cache_choice(overrides.get("cache", True), overrides.get("cache_dir"))  # both given: which?
    # the run's judging context: the judge given is never changed (an instance: a keyword's calibration only)
    judging = (judge if isinstance(judge, Judging)
               else run_judging(judge, overrides.get("judge_options"), s.prompts) if isinstance(judge, Judge)
               else run_judging(s.judge, s.judge_options, s.prompts))
    # a window too small for one item, with the instruction texts as asked (overrides, custom metrics): refused now
    own = {family: smallest for m in chosen for family, smallest in m.window_prompts.items()}
    check_window(judging, [p for m in chosen for p in m.prompts], own)
    if checkpoint is not None and not isinstance(checkpoint, Checkpoint):
        checkpoint = Checkpoint(checkpoint)
    # a checkpoint is held while the run is live: another live run of it is refused (CheckpointError), not resumed
    held = checkpoint.held() if checkpoint else nullcontext()
    with judging.cached(s.cache, s.cache_dir if s.cache else None), held:
        report = _run(samples, chosen, judging, embedder, s, skipped, checkpoint)
    if s.labels:  # people's spot checks of this run's items, and the gate read from them
        from ..quality.spot_checks import read_label_files, with_spot_checks  # noqa: PLC0415 - see import rules

        report = with_spot_checks(report, read_label_files(s.labels), files=s.labels, samples=given)
    if getattr(given, "ignored", None):
        report.meta["ignored_fields"] = list(given.ignored)  # listed once: the terminal, Markdown, HTML show it
    if s.name or s.tags:  # the run history's name and tags, in every report of the run
        report.meta["run"] = {k: v for k, v in (("name", s.name), ("tags", list(s.tags))) if v}
    if s.history:  # localragas eval records its run once its reports are written (Evaluation.record)
        from .history_record import record_run  # noqa: PLC0415

        record_run(report, samples=given)
    return report


def run_judging(judge: Judge | str | None, judge_options: Mapping[str, Any] | None = None,
                prompts: Mapping[str, str | Path] | None = None) -> Judging:
    """A run's judging context, its cache not yet opened (Judging.cached): the judge (an instance, or built by
    get_judge from a name or path and the options), the calibration the options choose (judges/calibrated.py; with an
    instance, only `calibration` may be among them) and the user's instruction texts for these families (a bad family
    or file: ConfigError before any judging)."""
    made_from = None
    overrides = load_overrides(dict(prompts)) if prompts else None  # a bad file: refused before a judge is built
    if isinstance(judge, Judge):
        calibration = run_calibration(judge, dict(judge_options or {}))
    else:
        backend, chosen = split_calibration(dict(judge_options or {}))
        made_from = (judge, backend)  # what a Dask worker builds its own judge from (run/dask_worker.py)
        judge = get_judge(judge, backend)
        calibration = calibration_of(judge, chosen)
    judging = Judging(judge, prompts=overrides, calibration=calibration)
    judging.made_from = made_from
    return judging


def prompt_meta(chosen: list[Metric], overrides: PromptOverrides | None) -> dict[str, Any]:
    """report.meta["prompts"]: the template sha256 of each family the metrics ask, as used, with every hash a
    calibration of their graded verdicts records (graded_hashes: e.g. support_examples, null_statements), and the
    files of the overridden ones."""
    own = {p: m.template for m in chosen if m.template is not None for p in m.prompts}
    hashes = template_hashes([p for m in chosen for p in m.prompts], overrides, own)
    for graded in graded_hashes(chosen, overrides).values():
        hashes.update(graded)
    return {"sha256": dict(sorted(hashes.items())), "overridden": dict(overrides.sources) if overrides else {}}


def graded_hashes(metrics: list[Metric], overrides: PromptOverrides | None) -> dict[str, dict[str, str]]:
    """Calibration family -> the prompt hashes (WithVerdicts.prompt_hashes) of each metric scored with graded
    verdicts, with the user's overrides."""
    return {m.graded_family: m.prompt_hashes(overrides)
            for m in metrics if isinstance(m, WithVerdicts) and m.graded}


def check_cache_choice(cache: bool, cache_dir: str | Path | None) -> None:
    if not cache and cache_dir is not None:
        raise ConfigError("cache=False turns the judge cache off, and cache_dir names one: give one of them")


def _run(samples: list[Sample], chosen: list[Metric], judging: Judging, embedder, s: RunSettings, skipped,
         checkpoint) -> Report:
    """evaluate() once its inputs are checked and the run's judging context built, its cache open."""
    names = [m.name for m in chosen]
    if checkpoint is not None and not isinstance(checkpoint, Checkpoint):
        checkpoint = Checkpoint(checkpoint)
    finished = checkpoint.finished() if checkpoint else None  # where each finished sample's line is, not its result
    if any(m.uses_embedder for m in chosen) and not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    if judging.cache is not None and isinstance(embedder, Embedder) and not isinstance(embedder, CachedEmbedder):
        embedder = CachedEmbedder(embedder, judging.cache)
    unknown = sorted(set(s.thresholds) - set(all_metrics()))
    if unknown:
        raise ConfigError(f"threshold for unknown metric(s) {', '.join(unknown)}; valid: {', '.join(all_metrics())}")
    calibration = calibration_in_effect(judging, chosen)
    covered = list(calibration.families) if calibration else []
    limits = {k: v for k, v in {**default_thresholds(chosen, covered), **s.thresholds}.items() if k in names}

    collected = RunResults(len(samples), names, judging.stats.counters())  # on disk past SPILL_AFTER samples
    todo = Todo(samples)  # positions: each sample read again when scored (a LazySamples from its file)
    resumed = 0
    emb = embedder.inner if isinstance(embedder, CachedEmbedder) and s.engine != "local" else embedder
    with open_engine(s, judging, chosen, emb if isinstance(emb, Embedder) else None, calibration) as engine:
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

            def route(i: int, item: Sample | Canary, digest: str | None, result: SampleResult | CanaryAnswers) -> None:
                if i < 0:  # a canary task (run/engines.py Todo): its answers, never a sample
                    tally.record(todo.canaries[-1 - i], result)
                else:
                    finish(i, cast(Sample, item), digest, cast(SampleResult, result))

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
        "calibration": calibration.describe() if calibration else None,
        "uncalibrated": uncalibrated(chosen, covered),
        "judge_stats": scored,
        "judge_totals": collected.totals(results),
        "share_of_wall_in_judge": round(scored["seconds"] / wall, 4) if wall > 0 else None,
        "judge_cache": str(judging.cache.path) if judging.cache else None,
        "embedder": embedder.describe() if isinstance(embedder, Embedder) else None,
        "thresholds": limits,
        "threshold_origins": {k: s.threshold_origins.get(k, IN_PYTHON) for k in s.thresholds if k in names},
        "prompts": prompt_meta(chosen, judging.prompts),
        "versions": _versions(),
    }
    report = Report(meta=meta, metrics=names, definitions={m.name: m.describe() for m in chosen},
                    gate=Gate(enabled=s.gate, passed=True, max_error_rate=s.max_error_rate),
                    samples=results, skipped=list(skipped or []))
    return regate(report, limits, gate_on=s.gate_on, enabled=s.gate)


def _languages(samples: list[Sample]) -> dict[str, int]:
    """report.meta["languages"]: the language each sample's script says (ja, ko: asked in English) -> samples."""
    counts: dict[str, int] = {}
    for sample in samples:
        detected = scope_of(sample).detected
        counts[detected] = counts.get(detected, 0) + 1
    return dict(sorted(counts.items()))


def calibration_in_effect(judging: Judging, metrics: list[Metric]) -> CalibrationMap | None:
    """The run's calibration as a run of `metrics` applies it: a family whose map was fitted under other prompts
    than the run asks (its recorded prompt_sha256, e.g. the user overrode verify_statement since) is left out, with the
    reason in not_applied; None when the run is uncalibrated."""
    return calibration_for(judging, graded_hashes(metrics, judging.prompts))


def calibration_for(judging: Judging, asked: Mapping[str, Mapping[str, str]]) -> CalibrationMap | None:
    """The run's calibration less the families `asked` (calibration family -> {prompt family: template sha256} as
    the run asks them) asks under other prompts than it was fitted under (CalibrationMap.for_prompts, the user's
    overrides named as such); None when the run is uncalibrated. Also `localragas generate`'s
    (testset.generation.support_calibration)."""
    if judging.calibration is None:
        return None
    return judging.calibration.for_prompts(asked, judging.prompts.texts if judging.prompts else ())


def calibrated_families(judging: Judging, metrics: list[Metric]) -> list[str]:
    """The prompt families the run's calibration covers in a run of `metrics` (none when uncalibrated)."""
    calibration = calibration_in_effect(judging, metrics)
    return list(calibration.families) if calibration else []


def run_thresholds(report: Report) -> dict[str, float]:
    """The thresholds a report's run recorded (meta.thresholds: eval's flags over localragas.toml over the defaults,
    recorded with --no-gate too); a report that records none gets the defaults of its metrics' definitions, never an
    empty gate."""
    if "thresholds" in report.meta:
        return dict(report.meta["thresholds"] or {})
    covered = _covered(report)
    chosen = {n: d.default_threshold(covered) for n, d in definitions_of(report).items()}
    return {n: t for n, t in chosen.items() if t is not None}


def _covered(report: Report) -> list[str]:
    """The prompt families the run's calibration covered (meta.calibration.families)."""
    return list(((report.meta.get("calibration") or {}).get("families")) or {})


def regate(report: Report, thresholds: dict[str, float] | None = None, gate_on: str | None = None,
           enabled: bool | None = None, max_error_rate: float | None = None,
           overrides: dict[str, float] | None = None, overrides_origin: str = "set with -t") -> Report:
    """Recompute a report's aggregates, intervals and gate from its per-sample results (no judging).

    thresholds: the full set to apply (default: the run's own, run_thresholds); overrides: thresholds over that set
    (`report -t`, `merge -t`), set where overrides_origin says; gate_on / enabled / max_error_rate: default the
    report's own. The metrics' directions and gate messages are the report's definitions (definitions_of), which the
    result then stores; a threshold that is not its metric's default is said to be set where meta.threshold_origins
    says.
    """
    names = report.metrics
    limits = {**(run_thresholds(report) if thresholds is None else thresholds), **(overrides or {})}
    unknown = sorted(set(limits) - set(names))
    if unknown:
        raise ConfigError(f"threshold for metric(s) not in this report: {', '.join(unknown)}; it has {', '.join(names)}")
    definitions = definitions_of(report)
    problems = {n: d.problem for n, d in definitions.items() if d.problem}
    lower = {n for n, d in definitions.items() if not d.higher_is_better}
    columns = columns_of(report.samples, names)  # a run's carry them; else one pass over the results
    summary = summarise_columns(columns, names)
    categories = categories_of(columns, names)
    for s in [*summary, *(s for rows in categories.values() for s in rows)]:
        s.higher_is_better = s.metric not in lower
    covered = _covered(report)
    origins = {**(report.meta.get("threshold_origins") or {}), **{n: overrides_origin for n in overrides or {}}}
    origins = {n: o for n, o in origins.items() if n in limits}
    sources = {n: _source(definitions[n].threshold_basis(t, covered), origins.get(n))
               for n, t in limits.items() if n in definitions}
    checks = report.spot_checks
    gate = run_gate(summary, limits, problems, enabled=report.gate.enabled if enabled is None else enabled,
                    on=gate_on or report.gate.on, lower_is_better=lower,
                    max_error_rate=report.gate.max_error_rate if max_error_rate is None else max_error_rate,
                    judge_failures={**flat_metrics(report, definitions), **canary_failures(report)}, sources=sources,
                    people=checks.metrics if checks else None)
    meta = {**report.meta, "thresholds": limits, "threshold_origins": origins, "ci": ci_settings()}
    update: dict[str, Any] = {"definitions": definitions, "summary": summary, "by_category": categories, "gate": gate,
                              "meta": meta}
    if checks is not None:  # each checked metric's three-way reading at its threshold as now set
        update["spot_checks"] = checks.model_copy(update={"metrics": {
            m: c.model_copy(update={"gate": people_reading(c, limits[m], m not in lower) if m in limits else None})
            for m, c in checks.metrics.items()}})
    return report.model_copy(update=update)


IN_PYTHON = "set in Python"  # a threshold given to RunSettings(...) itself, not through a layer (RunSettings.over)


def _source(basis: str, origin: str | None) -> str:
    """Why a threshold applies: its default's basis, or where it was set (a report written before origins were
    recorded: "given")."""
    return origin if basis == GIVEN and origin else basis


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    out = {}
    for pkg in ("llama-cpp-python", "sentence-transformers", "torch", "pydantic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out
