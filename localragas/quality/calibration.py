"""Measure a judge against human labels: score labelled rows with one metric, report agreement (`localragas calibrate`,
and localragas.calibrate() from Python).

A labelled file holds samples (the usual fields) plus `label: {metric, value, kind}`; pairwise rows add `pair`
and `better` (see localragas.quality.agreement for the figures). The same rows may be given in Python (a list of dicts, a
pandas DataFrame, a datasets.Dataset; read as evaluate() reads them, localragas.data.sample_inputs), where a table may
hold the label as the columns label.metric, label.kind, label.value. Files and rows given in Python are checked by
one reader (read_labelled). Rows are scored with localragas.run.runner.evaluate, so the judge cache and resume work as
for `eval`; only the label's metric is computed.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .. import __version__
from ..core import paths
from .agreement import KINDS, Agreement, Kind, binary_agreement, graded_agreement, pairwise_agreement
from ..run.checkpoint import Checkpoint, run_key
from ..data.column_map import ColumnCheck, check_columns
from ..data.dataset import DEFAULT_MAX_INPUT_BYTES, read_records
from ..core.errors import DatasetError
from ..run.gate import default_thresholds
from ..metrics import all_metrics, get_metrics
from ..metrics.base import WithVerdicts
from ..data.sample_record import SampleIds, sample_from_dict
from ..data.schema import Sample, SampleResult
from ..run.stats import ci_settings, reason_kind

# what an unscored reason means for a labelled file (the rows lack an input the metric needs)
_MISSING_INPUT = {
    "no_reference": "context_recall needs a reference; these rows have none.",
    "no_contexts": "these rows have no contexts.",
}


@dataclass
class LabelledRow:
    line: int | None
    sample: Sample
    metric: str
    kind: str
    value: float
    pair: str | None = None
    better: bool | None = None


class RowOutcome(BaseModel):
    """One labelled row: the human label, the metric's score or why it has none."""

    id: str
    line: int | None = None
    label: float
    score: float | None = None
    unscored: str | None = None
    pair: str | None = None
    better: bool | None = None
    # the metric's judged items as its evidence lists them (claims, statements or chunks, each with its verdict and,
    # graded, its calibrated and raw P(yes)); None for a metric without items, or an unscored row
    items: list[dict[str, Any]] | None = None


class Calibration(BaseModel):
    """Agreement of one metric with one kind of human label in one source: a file, or rows given in Python."""

    file: str  # the file's path, or "DataFrame", "samples" (a list), "Dataset" for rows given in Python
    dataset_sha256: str | None = None  # the file's
    metric: str  # the metric the rows were scored with
    label_metric: str | None = None  # the labels' metric, when the rows were scored with another (--metric)
    metric_options: dict[str, Any] = Field(default_factory=dict)  # the metric's settings, e.g. {"verdicts": "json"}
    kind: Kind
    rows: int
    pairs: int | None = None  # pairwise
    scored: int
    unscored: int
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    agreement: Agreement
    seconds_per_sample: float | None = None  # judging time per row (answers from the cache take ~0 s)
    judge_calls: int = 0
    cache_hits: int = 0
    judge: dict[str, Any] = Field(default_factory=dict)
    embedder: dict[str, Any] | None = None
    # graded verdicts: whether the scores went through the judge's calibration map (False: its raw P(yes));
    # None for a metric without graded verdicts
    calibrated: bool | None = None
    notes: list[str] = Field(default_factory=list)
    per_row: list[RowOutcome] = Field(default_factory=list)

    def __repr__(self) -> str:
        """The counts and each figure with its interval; every row is in per_row, the whole in model_dump_json()."""
        from ..report.calibration import calibration_text  # noqa: PLC0415

        return calibration_text(self)

    __str__ = __repr__


class CalibrationRun(BaseModel):
    """What `localragas calibrate` measured (its --out file): meta (judge, settings, CI method), a Calibration per
    source, metric and label kind."""

    meta: dict[str, Any] = Field(default_factory=dict)
    results: list[Calibration] = Field(default_factory=list)

    def __repr__(self) -> str:
        """A few lines per result; the whole run is model_dump_json() (or report.calibration.write_calibration)."""
        from ..report.calibration import calibration_text  # noqa: PLC0415

        return calibration_text(self)

    __str__ = __repr__


# --- reading labelled rows --------------------------------------------------------------------------------------------

def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


_FLAT_LABEL = ("label.metric", "label.kind", "label.value")  # a table's label columns (pandas.json_normalize)


def _label_object(record: Mapping[str, Any], shown: str, line: int | None) -> Any:
    """The row's label: its `label` object, or one made of its label.metric / label.kind / label.value columns."""
    flat = {name.split(".", 1)[1]: record[name] for name in _FLAT_LABEL if name in record}
    if not flat:
        if record.get("label") is None:
            raise DatasetError(shown, line, "label", "missing: a labelled row needs label: {metric, value, kind} "
                                                     "(in a table: columns label.metric, label.kind, label.value)")
        return record["label"]
    if record.get("label") is not None:
        raise DatasetError(shown, line, "label", "given twice, as label and as columns label.metric, label.kind, "
                                                 "label.value: keep one")
    return flat


def _label(record: Mapping[str, Any], shown: str, line: int | None, metrics: dict | None) -> tuple[str, str, float]:
    """(metric, kind, value) of a row's label; metrics: the names label.metric may take (None: any name)."""
    label = _label_object(record, shown, line)
    if not isinstance(label, Mapping):
        raise DatasetError(shown, line, "label", f"expected an object {{metric, value, kind}}, got {_type(label)}")
    metric, kind, value = label.get("metric"), label.get("kind"), label.get("value")
    if not isinstance(metric, str) or not metric.strip():
        raise DatasetError(shown, line, "label.metric", f"expected a metric name, got {metric!r}")
    if metrics is not None and metric not in metrics:
        raise DatasetError(shown, line, "label.metric", f"unknown metric {metric!r}; valid: {', '.join(metrics)} "
                                                        "(or score the rows with another metric: --metric NAME)")
    if kind not in KINDS:
        raise DatasetError(shown, line, "label.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "pairwise":
        return metric, kind, float(bool(record.get("better")))  # the preference is `better`; value is not used
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)):
        raise DatasetError(shown, line, "label.value", f"expected a number, got {_type(value)}")
    if kind == "binary" and value not in (0, 1):
        raise DatasetError(shown, line, "label.value", f"a binary label is 0 or 1, got {value!r}")
    if kind == "graded" and not 0.0 <= value <= 1.0:
        raise DatasetError(shown, line, "label.value", f"a graded label is in [0, 1], got {value!r}")
    return metric, kind, float(value)


@dataclass
class LabelledSource:
    """The checked rows of one labelled file, or of labelled rows given in Python (a DataFrame, dicts, a Dataset)."""

    name: str  # the file's path, or what rows given in Python are called in errors ("DataFrame", "samples")
    rows: list[LabelledRow]
    path: Path | None = None  # a file's
    sha256: str | None = None  # a file's

    def digest(self) -> str:
        """The file's sha256, or (rows given in Python) one of the rows as read: what their checkpoint is named by."""
        if self.sha256:
            return self.sha256
        rows = [[r.sample.model_dump(), r.metric, r.kind, r.value, r.pair, r.better] for r in self.rows]
        return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def read_labelled(data: Any, *, any_metric: bool = False, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                  columns: Mapping[str, str] | None = None) -> LabelledSource:
    """The rows of a labelled file, or of labelled rows given in Python, validated: sample fields as for `eval`
    (any name a file or evaluate() accepts, and `columns`), then the label (`label: {metric, kind, value}`, or in a
    table the columns label.metric, label.kind, label.value), pair and better.

    data: a path (.jsonl, .json, .csv), or what localragas.data.sample_inputs.python_records reads (a list of dicts, a
    pandas DataFrame, a datasets.Dataset). Errors name the file and line, or the row (from 1), and the field. Pairs
    must hold exactly two rows of one metric, one of them better.
    any_metric: accept a label.metric localragas does not compute (the rows are scored with another metric).
    max_input_bytes: a larger file is refused, as is a path that is not a regular file (load_samples)."""
    from .. import models  # noqa: PLC0415
    from ..data.sample_inputs import numbered_rows, python_records  # noqa: PLC0415

    columns = check_columns(columns)
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        shown, unit, records = str(data), "line", read_records(path, max_input_bytes)
        if records:
            ColumnCheck(columns, shown).over(r for _, r in records)
        rows = _labelled_rows(records, shown, unit, any_metric, columns)
        return LabelledSource(shown, rows, path, models.sha256_of(path))
    shown, records = python_records(data, columns, samples=False)
    with numbered_rows():
        return LabelledSource(shown, _labelled_rows(records, shown, "row", any_metric, columns))


def load_labelled(data: Any, any_metric: bool = False, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                  columns: Mapping[str, str] | None = None) -> list[LabelledRow]:
    """read_labelled(...).rows: the checked rows of a labelled file (or of labelled rows given in Python)."""
    return read_labelled(data, any_metric=any_metric, max_input_bytes=max_input_bytes, columns=columns).rows


def _labelled_rows(records: Iterable[tuple[int | None, Any]], shown: str, unit: str, any_metric: bool,
                   columns: Mapping[str, str]) -> list[LabelledRow]:
    """Each record (with the line, or row, it is at) as a sample and its label; the pairs checked."""
    metrics = None if any_metric else all_metrics()
    rows: list[LabelledRow] = []
    ids = SampleIds(shown, unit)
    for line, record in records:
        sample = ids.claim(sample_from_dict(record, path=shown, line=line, columns=columns), line)
        metric, kind, value = _label(record, shown, line, metrics)
        pair = better = None
        if kind == "pairwise":
            pair, better = record.get("pair"), record.get("better")
            if isinstance(pair, float) and pair.is_integer():
                pair = int(pair)  # a table's integer column with a gap (pandas makes it float)
            if isinstance(pair, bool) or not isinstance(pair, (str, int)) or not str(pair).strip():
                raise DatasetError(shown, line, "pair", f"a pairwise row needs a pair id (string), got {pair!r}")
            if not isinstance(better, bool):
                message = f"a pairwise row needs better: true or false, got {_type(better)}"
                raise DatasetError(shown, line, "better", message)
            pair = str(pair).strip()
        rows.append(LabelledRow(line, sample, metric, kind, value, pair, better))
    if not rows:
        raise DatasetError(shown, None, None, "no samples")
    _check_pairs(rows, shown, unit)
    return rows


def _check_pairs(rows: list[LabelledRow], shown: str, unit: str = "line") -> None:
    members: dict[tuple[str, str], list[LabelledRow]] = {}
    for r in rows:
        if r.kind == "pairwise":
            group = members.setdefault((r.metric, r.pair), [])  # type: ignore[arg-type]
            group.append(r)
            if len(group) > 2:
                raise DatasetError(shown, r.line, "pair", f"pair '{r.pair}' has more than two rows "
                                                          f"({unit}s {', '.join(str(m.line) for m in group)})")
    for (_, pair), group in members.items():
        if len(group) != 2:
            raise DatasetError(shown, group[0].line, "pair", f"pair '{pair}' has one row; a pair needs two")
        if group[0].better == group[1].better:
            raise DatasetError(shown, group[1].line, "better", f"pair '{pair}': exactly one of its two rows must "
                                                               f"have better: true")


def take(rows: list[LabelledRow], limit: int | None) -> list[LabelledRow]:
    """The first `limit` rows in file order, pairs kept whole: a pair counts at its first row, and a pair begun
    within the limit is taken with both rows (so --limit 5 on a pairwise file takes 3 pairs)."""
    if not limit:
        return rows
    units: dict[object, list[LabelledRow]] = {}
    for i, r in enumerate(rows):
        units.setdefault(("pair", r.metric, r.pair) if r.kind == "pairwise" else i, []).append(r)
    kept: list[LabelledRow] = []
    for unit in units.values():
        if len(kept) >= limit:
            break
        kept.extend(unit)
    order = {id(r): i for i, r in enumerate(rows)}
    return sorted(kept, key=lambda r: order[id(r)])


# --- scoring and agreement --------------------------------------------------------------------------------------------

def calibrate_source(source: LabelledSource, judge, embedder=None, *, metric: str | None = None,
                     limit: int | None = None, thresholds: Mapping[str, float] | None = None, resume: bool = True,
                     progress: bool | None = None,
                     metric_options: Mapping[str, dict] | None = None) -> list[Calibration]:
    """Score one source's labelled rows with their label's metric and measure agreement, per metric and label kind.

    metric: score every row with this metric instead of its label's (e.g. a question-only relevance metric for
    chunk labels that say whether a chunk answers the question); recorded as `metric`, the label's as `label_metric`.

    judge: a Judge instance, with the cache it is to use (judge.cache, or None: no cache); the caller closes it.
    embedder: as for evaluate (needed for answer_relevancy only).
    thresholds: gate thresholds (default: each metric's, gate.default_thresholds) for the binary figures at the gate
    threshold.
    resume: keep finished rows in a checkpoint under the state folder, as `eval` does; removed when done.
    metric_options: per metric, settings as for evaluate (e.g. {"faithfulness": {"verdicts": "json"}}); those of
    metrics this source does not score are ignored here (`calibrate` checks them all).
    """
    from ..run.runner import calibrated_families, evaluate  # noqa: PLC0415

    if metric is not None:
        get_metrics([metric])  # an unknown name: ConfigError listing the valid ones
    rows = take(source.rows, limit)
    digest = source.digest()
    where = source.path.resolve() if source.path else source.name
    out: list[Calibration] = []
    for labelled in dict.fromkeys(r.metric for r in rows):
        group = [r for r in rows if r.metric == labelled]
        scored_with = metric or labelled
        options = {scored_with: dict(metric_options[scored_with])} if scored_with in (metric_options or {}) else None
        chosen = get_metrics([scored_with], options)
        defaults = default_thresholds(chosen, calibrated_families(judge, chosen))
        limits = {**defaults, **(thresholds or {})}
        checkpoint = None
        if resume:
            key = run_key("calibrate", where, digest, scored_with, judge.scoring_fingerprint, embedder, limit,
                          *([options] if options else []))
            checkpoint = Checkpoint(paths.runs_dir() / f"{key}.jsonl")
        report = evaluate([r.sample for r in group], metrics=[scored_with], judge=judge, embedder=embedder,
                          gate=False, progress=progress, cache=judge.cache is not None, checkpoint=checkpoint,
                          metric_options=options)
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


def calibrate(data: Any, judge=None, embedder=None, *, metric: str | None = None, limit: int | None = None,
              thresholds: Mapping[str, float] | None = None, columns: Mapping[str, str] | None = None,
              cache: bool = True, cache_dir: str | Path | None = None, resume: bool = True,
              progress: bool | None = None, metric_options: Mapping[str, dict] | None = None,
              max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
              judge_options: Mapping[str, Any] | None = None,
              prompts: Mapping[str, str | Path] | None = None) -> CalibrationRun:
    """Measure how well metrics agree with human labels: score each labelled row with its label's metric, then the
    agreement per source, metric and label kind (`localragas calibrate`; the same CalibrationRun its --out writes).

    data: a labelled file's path, a list of paths, or labelled rows given in Python: a list of dicts, a pandas
    DataFrame, a datasets.Dataset. Each row: a sample's fields (any name evaluate() accepts, and `columns`) and its
    label, `label: {metric, kind, value}` or in a table the columns label.metric, label.kind, label.value (what
    pandas.json_normalize makes of the file's rows); pairwise rows add `pair` and `better` (read_labelled).
    Every source is read and checked before the judge loads or any judging starts.
    judge: a Judge instance (the caller closes it), or a name or path for get_judge (closed here; None: the default).
    embedder: an instance, a name or path, or None for the default (loaded only for answer_relevancy).
    metric: score every row with this metric instead of its label's. limit: the first N rows of each source, pairs
    kept whole. thresholds: gate thresholds for the binary figures at the gate (default: each metric's).
    cache: the judge cache, as for evaluate() and the CLI: on by default in .localragas/cache (or
    $LOCALRAGAS_STATE_DIR/cache); cache_dir elsewhere; cache=False neither reads nor writes it. A judge that already
    has a cache (judge.cache) keeps using it.
    resume: keep finished rows in a checkpoint under .localragas/runs (removed when done), as the CLI does.
    progress: None (default) a bar in a notebook or an interactive session only, as for evaluate(); True, False.
    metric_options: per metric, settings as for evaluate (e.g. {"faithfulness": {"verdicts": "json"}}).
    max_input_bytes: a larger file is refused (as by load_samples).
    judge_options: as for evaluate(): the judge's settings, and "calibration" (a file, or "none"); with a Judge
    instance only "calibration" applies.
    prompts: as for evaluate(): prompt family -> a file whose text replaces the family's instruction block (like
    `calibrate --prompt FAMILY=FILE`), e.g. {"verify_statement": "instruction.txt"}; set on the judge.
    """
    from ..judges import Judge, get_judge  # noqa: PLC0415
    from ..judges.calibrated import set_calibration  # noqa: PLC0415
    from ..run.runner import calibration_in_effect, check_cache_choice, judge_cache, set_prompts  # noqa: PLC0415

    if metric is not None:
        get_metrics([metric])
    for name, opts in (metric_options or {}).items():
        get_metrics([name], {name: dict(opts)})  # an unknown metric or a bad value: ConfigError before any judging
    check_cache_choice(cache, cache_dir)
    sources = [s if isinstance(s, LabelledSource) else
               read_labelled(s, any_metric=metric is not None, max_input_bytes=max_input_bytes, columns=columns)
               for s in _sources(data)]  # every source fails now, not in an hour
    if isinstance(judge, Judge):
        set_calibration(judge, judge_options)
        set_prompts(judge, prompts)  # a bad family or file: ConfigError before any judging
    else:
        judge = get_judge(judge, dict(judge_options or {}))
        try:
            return calibrate(sources, judge, embedder, metric=metric, limit=limit, thresholds=thresholds,
                             cache=cache, cache_dir=cache_dir, resume=resume, progress=progress,
                             metric_options=metric_options, max_input_bytes=max_input_bytes, prompts=prompts)
        finally:
            judge.close()
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    results: list[Calibration] = []
    with judge_cache(judge, cache, cache_dir):
        cache_path = str(judge.cache.path) if judge.cache else None
        for source in sources:
            results += calibrate_source(source, judge, embedder, metric=metric, limit=limit, thresholds=thresholds,
                                        resume=resume, progress=progress, metric_options=metric_options)
    every = [all_metrics()[n].with_options(**(metric_options or {}).get(n, {})) for n in all_metrics()]
    scored = [get_metrics([r.metric], {r.metric: r.metric_options})[0] for r in results]
    in_effect = calibration_in_effect(judge, scored)  # the families whose prompts changed since the fit left out
    meta = {
        "localragas": __version__,
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "files": [s.name for s in sources],
        "limit": limit,
        "metric": metric,
        "metric_options": {k: dict(v) for k, v in (metric_options or {}).items()},
        "judge": judge.describe(),
        "embedder": next((r.embedder for r in results if r.embedder), None),
        "calibration": in_effect.describe() if in_effect else None,
        "uncalibrated": list(dict.fromkeys(r.metric for r in results if r.calibrated is False)),
        "thresholds": {**default_thresholds(every, list(in_effect.families) if in_effect else []),
                       **(thresholds or {})},
        "ci": {**ci_settings(), "method": "percentile bootstrap of each figure",
               "resampled": "rows (pairs, for pairwise labels)"},
        "judge_cache": cache_path,
    }
    return CalibrationRun(meta=meta, results=results)
