"""Measure a judge against human labels: score labelled rows with one metric, report agreement (`localragas calibrate`,
and localragas.calibrate() from Python).

The rows are read and checked by localragas.quality.labelled (files, or rows given in Python); what is measured is
held by localragas.quality.calibration_results (Calibration, CalibrationRun). Rows are scored with
localragas.run.runner.evaluate, so the judge cache and resume work as for `eval`; only the label's metric is computed.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..core import paths
from .agreement import binary_agreement, graded_agreement, pairwise_agreement
from .calibration_results import Calibration, CalibrationRun, RowOutcome
from ..run.checkpoint import Checkpoint, run_key
from ..run.gate import default_thresholds
from ..run.settings import RunSettings
from .labelled import LabelledRow, LabelledSource, read_labelled, take
from ..metrics import all_metrics, get_metrics
from ..metrics.base import WithVerdicts
from ..prompts.digest import metrics_digest
from ..data.schema import SampleResult
from ..data.unscored import reason_kind
from ..run.stats import ci_settings

# what an unscored reason means for a labelled file (the rows lack an input the metric needs)
_MISSING_INPUT = {
    "no_reference": "context_recall needs a reference; these rows have none.",
    "no_contexts": "these rows have no contexts.",
}


def calibrate_source(source: LabelledSource, judge, embedder=None, *, metric: str | None = None,
                     limit: int | None = None, thresholds: Mapping[str, float] | None = None, resume: bool = True,
                     progress: bool | None = None, metric_options: Mapping[str, dict] | None = None,
                     judge_options: Mapping[str, Any] | None = None, prompts: Mapping[str, str | Path] | None = None,
                     cache: bool = True, cache_dir: str | Path | None = None) -> list[Calibration]:
    """Score one source's labelled rows with their label's metric and measure agreement, per metric and label kind.

    metric: score every row with this metric instead of its label's (e.g. a question-only relevance metric for
    chunk labels that say whether a chunk answers the question); recorded as `metric`, the label's as `label_metric`.

    judge: a Judge instance (the caller closes it), asked as evaluate asks it with judge_options (only
    "calibration"), prompts, cache and cache_dir: each scoring run builds its own judging context.
    embedder: as for evaluate (needed for answer_relevancy only).
    thresholds: gate thresholds (default: each metric's, gate.default_thresholds) for the binary figures at the gate
    threshold.
    resume: keep finished rows in a checkpoint under the state folder, as `eval` does; removed when done.
    metric_options: per metric, settings as for evaluate (e.g. {"faithfulness": {"verdicts": "json"}}); those of
    metrics this source does not score are ignored here (`calibrate` checks them all).
    """
    from ..run.judging_context import calibrated_families, run_judging  # noqa: PLC0415
    from ..run.runner import evaluate  # noqa: PLC0415

    if metric is not None:
        get_metrics([metric])  # an unknown name: ConfigError listing the valid ones
    rows = take(source.rows, limit)
    digest = source.digest()
    where = source.path.resolve() if source.path else source.name
    out: list[Calibration] = []
    judging = run_judging(judge, judge_options, prompts)  # what the runs' keys and default thresholds are of
    for labelled in dict.fromkeys(r.metric for r in rows):
        group = [r for r in rows if r.metric == labelled]
        scored_with = metric or labelled
        options = {scored_with: dict(metric_options[scored_with])} if scored_with in (metric_options or {}) else None
        chosen = get_metrics([scored_with], options)
        defaults = default_thresholds(chosen, calibrated_families(judging, chosen))
        limits = {**defaults, **(thresholds or {})}
        checkpoint = None
        if resume:
            key = run_key("calibrate", where, digest, scored_with, judging.scoring_fingerprint, embedder, limit,
                          *([options] if options else []), metrics_digest(chosen))
            checkpoint = Checkpoint(paths.runs_dir() / f"{key}.jsonl")
        # the metric as an object, not a name: rows it cannot score are counted unscored, not refused (evaluate)
        report = evaluate([r.sample for r in group], metrics=chosen, judge=judge, embedder=embedder,
                          gate=False, progress=progress, cache=cache, cache_dir=cache_dir, checkpoint=checkpoint,
                          metric_options=options, judge_options=judge_options, prompts=prompts,
                          judge_check=False, history=False)  # calibrate measures the judge itself, no RAG run
        results = {s.id: s for s in report.samples}
        for kind in dict.fromkeys(r.kind for r in group):
            of_kind = [r for r in group if r.kind == kind]
            c = _calibration(source.name, source.sha256, scored_with, kind, of_kind, results,
                             limits.get(scored_with), report.meta)
            c.metric_options = (report.meta.get("metric_options") or {}).get(scored_with) or {}
            c.calibrated = _calibrated(scored_with, options, report.meta)
            if scored_with != labelled:
                c.label_metric = labelled
                c.notes.insert(0, f"labels for {labelled}, scored with {scored_with} (--metric)")
            out.append(c)
        if checkpoint:
            checkpoint.remove()
    return out


def _calibrated(metric: str, options: dict | None, meta: dict) -> bool | None:
    """Whether the metric's graded scores were calibrated in the run whose report meta is `meta`; None when it has no
    graded verdicts."""
    chosen = get_metrics([metric], options)[0]
    if not (isinstance(chosen, WithVerdicts) and chosen.graded):
        return None
    return metric not in (meta.get("uncalibrated") or [])


def _calibration(file: str, digest: str | None, metric: str, kind: str, rows: list[LabelledRow],
                 results: dict[str, SampleResult], threshold: float | None, meta: dict) -> Calibration:
    per_row = []
    key = all_metrics()[metric].items
    for r in rows:
        m = results[r.sample.id].metrics[metric]
        items = m.evidence.get(key) if key and m.value is not None else None
        per_row.append(RowOutcome(id=r.sample.id, line=r.line, label=r.value, score=m.value, unscored=m.unscored,
                                  pair=r.pair, better=r.better, items=items))
    scores = [o.score for o in per_row]
    if kind == "binary":
        agreement = binary_agreement([int(o.label) for o in per_row], scores, threshold)
    elif kind == "graded":
        agreement = graded_agreement([o.label for o in per_row], scores)
    else:
        pairs: dict[str, dict[bool, float | None]] = {}
        for o in per_row:
            pairs.setdefault(o.pair, {})[bool(o.better)] = o.score  # type: ignore[arg-type]
        agreement = pairwise_agreement([p[True] for p in pairs.values()], [p[False] for p in pairs.values()])
    reasons = Counter(reason_kind(o.unscored) for o in per_row if o.score is None and o.unscored)
    sample_results = [results[r.sample.id] for r in rows]
    notes = [f"{n} of {len(rows)} rows unscored ({reason}): {_MISSING_INPUT[reason]}"
             for reason, n in sorted(reasons.items()) if reason in _MISSING_INPUT]
    return Calibration(
        file=file, dataset_sha256=digest, metric=metric, kind=kind, rows=len(rows),  # type: ignore[arg-type]
        pairs=agreement.rows if kind == "pairwise" else None,
        scored=sum(o.score is not None for o in per_row), unscored=sum(o.score is None for o in per_row),
        unscored_reasons=dict(sorted(reasons.items())), agreement=agreement,
        seconds_per_sample=round(sum(s.seconds for s in sample_results) / len(rows), 3) if rows else None,
        judge_calls=int(sum(s.judge.get("calls", 0) for s in sample_results)),
        cache_hits=int(sum(s.judge.get("cache_hits", 0) for s in sample_results)),
        judge=meta.get("judge") or {}, embedder=meta.get("embedder"), notes=notes, per_row=per_row,
    )


def _sources(data: Any) -> list[Any]:
    """The sources in calibrate's `data`: one path, source or table of rows, or a list of paths (or sources)."""
    one = (str, os.PathLike, LabelledSource)
    if isinstance(data, one):
        return [data]
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, one) for d in data):
        return list(data)
    return [data]  # rows given in Python: a list of dicts, a DataFrame, a datasets.Dataset


# the settings calibrate applies (the others are an evaluation's), and those `calibrate --config FILE` takes
APPLIES = ("judge", "judge_options", "embedder", "thresholds", "metric_options", "limit", "columns", "cache",
           "cache_dir", "resume", "progress", "max_input_bytes", "prompts")
FROM_FILE = ("judge", "judge_options", "embedder", "thresholds", "metric_options", "max_input_bytes", "prompts")


def calibrate(data: Any, judge=None, embedder=None, *, settings: RunSettings | None = None,
              metric: str | None = None, **overrides: Any) -> CalibrationRun:
    """Measure how well metrics agree with human labels: score each labelled row with its label's metric, then the
    agreement per source, metric and label kind (`localragas calibrate`; the same CalibrationRun its --out writes).

    data: a labelled file's path, a list of paths, or labelled rows given in Python: a list of dicts, a pandas
    DataFrame, a datasets.Dataset. Each row: a sample's fields (any name evaluate() accepts, and `columns`) and its
    label, `label: {metric, kind, value}` or in a table the columns label.metric, label.kind, label.value (what
    pandas.json_normalize makes of the file's rows); pairwise rows add `pair` and `better` (read_labelled).
    Every source is read and checked before the judge loads or any judging starts.
    settings, overrides: as for evaluate() (RunSettings, run/settings.py), of which calibrate applies APPLIES:
    limit is the first N rows of each source, pairs kept whole; thresholds the gate thresholds for the binary
    figures at the gate (default: each metric's); resume keeps finished rows in a checkpoint under .localragas/runs.
    judge: a Judge instance (the caller closes it; only a judge_options keyword's "calibration" applies to it), or a
    name or path for get_judge (closed here; None: the settings'). embedder: an instance, a name or path, or None
    for the settings' (loaded only for answer_relevancy). metric: score every row with this metric instead of its
    label's.
    """
    from ..judges import Judge  # noqa: PLC0415
    from ..judges.cache import cache_file  # noqa: PLC0415
    from ..judges.calibrated import run_options  # noqa: PLC0415
    from ..run.judging_context import calibration_in_effect, run_judging  # noqa: PLC0415
    from ..run.prepared_run import check_cache_choice  # noqa: PLC0415
    from ..run.settings import refuse  # noqa: PLC0415

    refuse(overrides, set(RunSettings.model_fields) - set(APPLIES), "calibrate()", "does not apply to calibrate")
    named = {k: v for k, v in (("judge", judge), ("embedder", embedder)) if isinstance(v, str)}
    s = (settings or RunSettings()).over({**overrides, **named}, "calibrate()")
    check_cache_choice(overrides.get("cache", True), overrides.get("cache_dir"))  # both given: which?
    embedder = embedder if embedder is not None and not isinstance(embedder, str) else s.embedder
    limit, thresholds, metric_options, prompts, resume, progress = (s.limit, s.thresholds, s.metric_options,
                                                                    s.prompts, s.resume, s.progress)
    cache, cache_dir = s.cache, s.cache_dir if s.cache else None
    judge_options = overrides.get("judge_options") if isinstance(judge, Judge) else s.judge_options
    judge = judge if isinstance(judge, Judge) else s.judge
    if metric is not None:
        get_metrics([metric])
    for name, opts in (metric_options or {}).items():
        get_metrics([name], {name: dict(opts)})  # an unknown metric or a bad value: ConfigError before any judging
    sources = [x if isinstance(x, LabelledSource) else
               read_labelled(x, any_metric=metric is not None, max_input_bytes=s.max_input_bytes, columns=s.columns)
               for x in _sources(data)]  # every source fails now, not in an hour
    built = not isinstance(judge, Judge)  # built here from a name or path: closed here
    judging = run_judging(judge, judge_options, prompts)  # a bad option, family or file: before any judging
    options = run_options(judge_options) if built else judge_options  # beside the judge they built: calibration
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    results: list[Calibration] = []
    try:
        for source in sources:
            results += calibrate_source(source, judging.judge, embedder, metric=metric, limit=limit,
                                        thresholds=thresholds, resume=resume, progress=progress,
                                        metric_options=metric_options, judge_options=options, prompts=prompts,
                                        cache=cache, cache_dir=cache_dir)
    finally:
        if built:
            judging.judge.close()
    every = [all_metrics()[n].with_options(**(metric_options or {}).get(n, {})) for n in all_metrics()]
    scored = [get_metrics([r.metric], {r.metric: r.metric_options})[0] for r in results]
    in_effect = calibration_in_effect(judging, scored)  # the families whose prompts changed since the fit left out
    meta = {
        "localragas": __version__,
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "files": [s.name for s in sources],
        "limit": limit,
        "metric": metric,
        "metric_options": {k: dict(v) for k, v in (metric_options or {}).items()},
        "judge": judging.describe(),
        "embedder": next((r.embedder for r in results if r.embedder), None),
        "calibration": in_effect.describe() if in_effect else None,
        "uncalibrated": list(dict.fromkeys(r.metric for r in results if r.calibrated is False)),
        "thresholds": {**default_thresholds(every, list(in_effect.families) if in_effect else []),
                       **(thresholds or {})},
        "ci": {**ci_settings(), "method": "percentile bootstrap of each figure",
               "resampled": "rows (pairs, for pairwise labels)"},
        "judge_cache": str(cache_file(cache_dir)) if cache else None,
    }
    return CalibrationRun(meta=meta, results=results)
