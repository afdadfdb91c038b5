"""A finished run in the run history (run/history.py): its record read from the report's meta, summary and gate, its
per-sample scores, and back as a Report of scores alone, which quality/compare.py compares sample by sample.

`evaluate()` records its run when it ends, `localragas eval` (run/evaluation.py Evaluation.record) once its reports are
written, unless the setting `history` is off (--no-history, `history = false`, evaluate(..., history=False)). A history
that cannot be written never changes the run: record_run warns once on stderr, names the file and the reset, and the
run goes on (its report and exit code as without a history: the history is no part of the gate).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..core.errors import HistoryError
from ..core.printable import printable
from ..data.conversation_models import TurnResult
from ..data.metric_definition import MetricDefinition
from ..data.schema import Gate, MetricResult, MetricSummary, Report, SampleResult
from .history import History, MetricRecord, RunRecord, reset_hint

_warned: set[str] = set()  # the history files this process has warned about: once each


def record_run(report: Report, *, samples: Iterable[Any] | None = None, outputs: Mapping[str, Any] | None = None,
               path: str | Path | None = None) -> int | None:
    """Add the finished run to the history; its id, or None when the history could not be written (warned once)."""
    history = History(path)
    try:
        with history:
            return history.add(run_record(report, samples, outputs), scores_of(report))
    except Exception as e:  # noqa: BLE001 - whatever breaks the history, the run's result stands
        shown = str(history.path)
        if shown not in _warned:
            _warned.add(shown)
            why = str(e) if isinstance(e, HistoryError) else f"run history {history.path}: {type(e).__name__}: {e}; " \
                                                             f"{reset_hint(history.path)}"
            print(f"localragas: warning: this run was not recorded in the run history ({printable(why)}); its "
                  "results and exit code are unchanged; --no-history (history = false) turns the history off",
                  file=sys.stderr)
        return None


def verdict_of(gate: Gate) -> str:
    if not gate.enabled:
        return "no gate"
    if not gate.evaluated:
        return "not evaluated"
    return "passed" if gate.passed else "failed"


def run_record(report: Report, samples: Iterable[Any] | None = None,
               outputs: Mapping[str, Any] | None = None) -> RunRecord:
    meta = report.meta
    gated = {g.metric: g for g in report.gate.results}
    metrics = [MetricRecord(metric=s.metric, mean=s.mean, ci_low=s.ci_low, ci_high=s.ci_high, scored=s.scored,
                            unscored=s.unscored, errors=s.errors, higher_is_better=s.higher_is_better,
                            threshold=gated[s.metric].threshold if s.metric in gated else None,
                            status=gated[s.metric].status if s.metric in gated else None) for s in report.summary]
    calibration = meta.get("calibration")
    prompts = (meta.get("prompts") or {})
    hashes = prompts.get("sha256") or {}
    run = meta.get("run") or {}
    return RunRecord(
        started=meta.get("started") or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        name=run.get("name"), tags=list(run.get("tags") or ()),
        dataset=meta.get("dataset"), dataset_sha256=meta.get("dataset_sha256") or _samples_sha256(samples),
        ids_sha256=hashlib.sha256("\n".join(s.id for s in report.samples).encode("utf-8")).hexdigest()[:16],
        rows=int(meta.get("samples") or len(report.samples)), skipped=len(report.skipped),
        verdict=verdict_of(report.gate), gate_on=report.gate.on, metrics=metrics,
        metric_options=meta.get("metric_options") or {}, judge=dict(meta.get("judge") or {}),
        calibration={k: calibration.get(k) for k in ("source", "sha256")} if isinstance(calibration, dict) else None,
        prompts={"digest": _digest(hashes), "sha256": {f: str(h)[:16] for f, h in hashes.items()},
                 **({"overridden": sorted(prompts["overridden"])} if prompts.get("overridden") else {})},
        embedder=(meta.get("embedder") or {}).get("name"), thresholds=meta.get("thresholds") or {},
        version=meta.get("localragas"), wall_seconds=meta.get("wall_seconds"),
        outputs={k: str(Path(v).resolve()) for k, v in (outputs or {}).items() if v is not None},
        checked={m: {"labelled": c.labelled, "items": c.items}
                 for m, c in (report.spot_checks.metrics.items() if report.spot_checks is not None else ())})


def _digest(hashes: Mapping[str, Any]) -> str:
    """One hash of the prompt templates the run asked (their sha256 per family)."""
    text = "\n".join(f"{f}={h}" for f, h in sorted(hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _samples_sha256(samples: Iterable[Any] | None) -> str | None:
    """The content hash of the samples given to evaluate() (no file to hash): each sample's fields, in order."""
    if samples is None:
        return None
    h = hashlib.sha256()
    for s in samples:
        h.update((s.model_dump_json() if hasattr(s, "model_dump_json") else repr(s)).encode("utf-8") + b"\n")
    return h.hexdigest()


def scores_of(report: Report) -> dict[str, Any]:
    """The per-sample scores as the history stores them: ids, categories (when any), each turn's conversation (when
    any: a comparison resamples conversations, quality/compare.py), each metric's scores in the samples' order (None:
    unscored) and the unscored reasons by position."""
    ids: list[str] = []
    categories: list[str | None] = []
    conversations: list[str | None] = []
    values: dict[str, list[float | None]] = {m: [] for m in report.metrics}
    unscored: dict[str, dict[str, str | None]] = {m: {} for m in report.metrics}
    for i, s in enumerate(report.samples):  # one pass: a large run's results are read back from disk
        ids.append(s.id)
        categories.append(s.category)
        conversations.append(s.turn.conversation if s.turn else None)
        for metric in report.metrics:
            r = s.metrics.get(metric)
            values[metric].append(None if r is None or r.value is None else round(r.value, 6))
            if r is not None and r.value is None:
                unscored[metric][str(i)] = r.unscored
    out: dict[str, Any] = {"ids": ids, "metrics": values, "unscored": {m: u for m, u in unscored.items() if u}}
    if any(categories):
        out["categories"] = categories
    if any(conversations):
        out["conversations"] = conversations
    return out


def _turns(conversations: list[str | None]) -> list[TurnResult | None]:
    """Each stored position's place in its conversation (None: a single sample), numbered in the run's order."""
    counts = Counter(c for c in conversations if c is not None)
    seen: Counter[str] = Counter()
    out: list[TurnResult | None] = []
    for c in conversations:
        if c is not None:
            seen[c] += 1
        out.append(None if c is None else TurnResult(conversation=c, turn=seen[c], turns=counts[c]))
    return out


def as_report(record: RunRecord, scores: Mapping[str, Any]) -> Report:
    """The run back as a Report of its scores alone (no evidence): what compare_reports reads, with the meta its
    warnings compare (judge, calibration, prompts, embedder, thresholds)."""
    categories = scores.get("categories") or [None] * len(scores.get("ids", []))
    turns = _turns(scores.get("conversations") or [None] * len(scores.get("ids", [])))
    samples = [SampleResult(id=i, category=categories[n], turn=turns[n], metrics={
        m: MetricResult(value=values[n], unscored=None if values[n] is not None else
                        (scores.get("unscored", {}).get(m, {}).get(str(n)) or "unscored"))
        for m, values in scores.get("metrics", {}).items()}) for n, i in enumerate(scores.get("ids", []))]
    meta = {"started": record.started, "judge": record.judge, "calibration": record.calibration,
            "prompts": {"sha256": record.prompts.get("sha256", {})}, "embedder": {"name": record.embedder},
            "thresholds": record.thresholds, "metric_options": record.metric_options, "dataset": record.dataset,
            "samples": record.rows}
    names = [m.metric for m in record.metrics]
    return Report(meta=meta, metrics=names,
                  definitions={m.metric: MetricDefinition(name=m.metric, higher_is_better=m.higher_is_better)
                               for m in record.metrics},
                  summary=[MetricSummary(metric=m.metric, mean=m.mean, scored=m.scored, unscored=m.unscored,
                                         ci_low=m.ci_low, ci_high=m.ci_high, higher_is_better=m.higher_is_better)
                           for m in record.metrics],
                  gate=Gate(enabled=record.verdict != "no gate", passed=record.verdict == "passed",
                            evaluated=record.verdict != "not evaluated"),
                  samples=samples)
