"""The items of a run a person can check (spot checks, docs/spot-checks.md): each metric's own judged items as its
evidence lists them, with the sample's text a reviewer needs.

- faithfulness: the answer's statements (evidence `claims`, flag `supported`), kind "statement";
- context_recall: the reference's statements (`statements`, flag `attributed`), kind "reference statement";
- context_precision: the retrieved chunks (`chunks`, flag `relevant`; rank k is contexts[k-1]), kind "chunk".

An item's key is `SAMPLE_ID|METRIC|INDEX|HASH`, HASH the first 16 hex digits of the sha256 of the JSON list
[item text, [contexts...]]: a label stays with the item it was given on, and a run whose text changed matches none.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..core.errors import ConfigError
from ..data.schema import Report, Sample, SampleInput, SampleResult

ITEM_THRESHOLD = 0.5  # judge_calls/verdicts.py YES: an item counts as supported (relevant) from this score

# metric -> (evidence list, text field, verdict flag, kind); context precision's text is the chunk (no text field)
ITEM_METRICS: dict[str, tuple[str, str | None, str, str]] = {
    "faithfulness": ("claims", "claim", "supported", "statement"),
    "context_recall": ("statements", "statement", "attributed", "reference statement"),
    "context_precision": ("chunks", None, "relevant", "chunk"),
}
SAMPLE_UNIT = frozenset({"context_precision"})  # a score that is no mean of its items: a draw is a whole sample


@dataclass(frozen=True)
class ReviewItem:
    """One judged item of one sample: what a reviewer sees and what their label is keyed by."""

    sample_id: str
    metric: str
    index: int  # its position in the metric's evidence list
    kind: str  # "statement" | "reference statement" | "chunk"
    text: str
    key: str
    judge_score: float  # the value the metric's score uses for it: the calibrated P(yes) when calibrated
    judge_verdict: bool  # judge_score >= ITEM_THRESHOLD
    question: str
    answer: str | None
    reference: str | None
    contexts: tuple[str, ...]
    chunk: int | None = None  # a chunk item's index in contexts


def item_digest(text: str, contexts: Sequence[str]) -> str:
    """The first 16 hex digits of the sha256 of [text, contexts] as JSON: unambiguous, whatever the texts hold."""
    blob = json.dumps([text, list(contexts)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def item_key(sample_id: str, metric: str, index: int, text: str, contexts: Sequence[str]) -> str:
    return f"{sample_id}|{metric}|{index}|{item_digest(text, contexts)}"


def _score(row: Mapping[str, Any], flag: str) -> float:
    """The item's score as the metric used it: p_<flag> (graded: calibrated, or raw without a calibration), else the
    yes/no verdict as 1 / 0."""
    p = row.get(f"p_{flag}")
    return float(p) if p is not None else float(bool(row.get(flag)))


def _texts(report: Report, data_path: str | Path | None,
           samples: Iterable[Sample] | None = None) -> dict[str, SampleInput]:
    """Each sample's text: the report's (`input`), else the samples' given, else the data file's, matched by id."""
    kept = {s.id: s.input for s in report.samples if s.input is not None}
    if kept or not report.samples:
        return kept
    if samples is not None:
        return {str(s.id): SampleInput(question=s.question, answer=s.answer, contexts=list(s.contexts),
                                       reference=s.reference) for s in samples}
    if data_path is None:
        raise ConfigError("the report keeps no sample text (run with --no-sample-text, or written before reports kept "
                          "it): re-run `localragas eval` without --no-sample-text, or give the data file it was run "
                          "on (--data DATA)")
    from ..data.dataset import load_samples  # noqa: PLC0415 - only for a report without its text

    return _texts(report, None, load_samples(data_path)[0])


def sample_items(result: SampleResult, metric: str, text: SampleInput) -> list[ReviewItem]:
    """The metric's items of one scored sample ([] when it is unscored or the metric has no items)."""
    got = result.metrics.get(metric)
    if got is None or got.value is None or metric not in ITEM_METRICS:
        return []
    plural, field, flag, kind = ITEM_METRICS[metric]
    contexts = tuple(text.contexts)
    out = []
    for i, row in enumerate(got.evidence.get(plural) or []):
        chunk = int(row.get("rank", i + 1)) - 1 if field is None else None
        body = (contexts[chunk] if chunk is not None and 0 <= chunk < len(contexts) else "") if field is None \
            else str(row.get(field, ""))
        score = _score(row, flag)
        out.append(ReviewItem(sample_id=result.id, metric=metric, index=i, kind=kind, text=body,
                              key=item_key(result.id, metric, i, body, contexts), judge_score=score,
                              judge_verdict=score >= ITEM_THRESHOLD, question=text.question, answer=text.answer,
                              reference=text.reference, contexts=contexts, chunk=chunk))
    return out


def reviewable(report: Report, metrics: Iterable[str] | None = None) -> list[str]:
    """The report's metrics whose items can be reviewed (or those of `metrics`; one that cannot: ConfigError)."""
    if metrics is None:
        return [m for m in report.metrics if m in ITEM_METRICS]
    chosen = list(metrics)
    for m in chosen:
        if m not in ITEM_METRICS:
            raise ConfigError(f"spot checks: {m!r} has no items a person can check; reviewable: "
                              f"{', '.join(ITEM_METRICS)}")
        if m not in report.metrics:
            raise ConfigError(f"spot checks: {m!r} is not in this report; it has {', '.join(report.metrics)}")
    return chosen


def review_items(report: Report, metrics: Iterable[str] | None = None, *, data_path: str | Path | None = None,
                 samples: Iterable[Sample] | None = None) -> list[ReviewItem]:
    """Every reviewable item of the report's scored samples, metric by metric, samples in report order.

    metrics: default every reviewable metric of the report. The sample text comes from the report (`input` of each
    sample); a report without it needs the samples it was run on (`samples`, or `data_path`, their data file; else
    ConfigError, exit 2)."""
    chosen = reviewable(report, metrics)
    texts = _texts(report, data_path, samples)
    out: list[ReviewItem] = []
    for metric in chosen:
        for result in report.samples:
            got = result.metrics.get(metric)
            if got is None or got.value is None:
                continue
            text = texts.get(result.id)
            if text is None:
                raise ConfigError(f"spot checks: sample {result.id!r} has no text in the report nor in the data file "
                                  f"{data_path}: is it the file the run was made on?")
            out.extend(sample_items(result, metric, text))
    return out
