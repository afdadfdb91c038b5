"""Aggregates over per-sample results: means with bootstrap confidence intervals, unscored counts, paired differences.

Every interval is a percentile bootstrap of the mean with a fixed seed, so the same scores always give the same
interval. An LLM judge misjudges a share of items; the interval says how far the mean could move by chance alone.

The turns of one conversation are not independent (one assistant, one topic, one retrieval index: a bad conversation
tends to have bad turns), so when results are turns the bootstrap resamples **conversations**: a drawn conversation
brings all its scored turns, a single question-answer sample is a conversation of its own, and each resample's mean
is still the turn-level mean (its turns' sum over their count). With every sample its own conversation it is the
plain bootstrap, draw for draw (tested); a run without conversations takes the plain path itself.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np

from ..data.schema import MetricSummary, SampleResult

if TYPE_CHECKING:
    from .score_columns import ScoreColumns

CI_LEVEL = 0.95
RESAMPLES = 2000
SEED = 0
_CHUNK = 250  # resamples drawn at a time, at most,
_DRAWN = 1 << 21  # and indices drawn at a time, at most (16 MB): bounded memory on large datasets


def ci_settings(clustered: bool = False) -> dict[str, object]:
    """What a report records about its intervals; `resampled`: "conversations" when its results hold turns of
    conversations (each resample draws whole conversations), else "samples"."""
    return {"level": CI_LEVEL, "resamples": RESAMPLES, "seed": SEED, "method": "percentile bootstrap of the mean",
            "resampled": "conversations" if clustered else "samples"}


NO_CLUSTER = -1  # a result in no conversation: a cluster of its own


def cluster_key(result: SampleResult) -> int:
    """The key of the conversation a result is a turn of (the first 63 bits of its id's BLAKE2b: a number, so that a
    run keeps 8 bytes a sample, not the ids), NO_CLUSTER for a single question-answer sample."""
    if result.turn is None:
        return NO_CLUSTER
    digest = hashlib.blake2b(result.turn.conversation.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def cluster_codes(keys: np.ndarray) -> np.ndarray | None:
    """Dense cluster codes for rows with these keys (cluster_key), numbered in the order the clusters first appear:
    rows of one conversation share a code, a NO_CLUSTER row has one of its own; None when no row is in a conversation
    (the plain bootstrap)."""
    keys = np.asarray(keys, dtype=np.int64)
    single = keys == NO_CLUSTER
    if single.all():
        return None
    keys = np.where(single, -1 - np.arange(keys.size), keys)  # a single row's own key: negative, unlike any other
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def resample_rows(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> Iterator[np.ndarray]:
    """The row indices of every bootstrap resample of n rows, as (k, n) arrays of a few resamples at a time
    (bounded memory). The same draws, in the same order, whatever the chunking (tested): the same rows always give
    the same interval, here and in localragas.quality.agreement."""
    rng = np.random.default_rng(seed)
    step = max(1, min(_CHUNK, _DRAWN // n))
    for start in range(0, resamples, step):
        yield rng.integers(0, n, size=(min(step, resamples - start), n))


def percentile_interval(values: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float]:
    """(low, high): the central `level` share of the resampled values, rounded as reports show it."""
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return round(float(low), 6), round(float(high), 6)


def bootstrap_ci(values: Sequence[float] | np.ndarray, level: float = CI_LEVEL, resamples: int = RESAMPLES,
                 seed: int = SEED, clusters: np.ndarray | None = None) -> tuple[float, float] | None:
    """(low, high) of the mean of values; None with fewer than 2 values (no spread to resample).

    clusters (cluster_codes: a code per value, 0..k-1): resample the clusters, each drawn with all its values, the
    mean of a resample being its values' sum over their count (the turn-level mean); None with fewer than 2 clusters.
    Held as each cluster's sum and count, so a resample costs what the plain one does over k rows."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    if clusters is None:
        means = np.concatenate([x[idx].mean(axis=1) for idx in resample_rows(x.size, resamples, seed)])
        return percentile_interval(means, level)
    codes = np.asarray(clusters, dtype=np.int64)
    sums, counts = np.bincount(codes, weights=x), np.bincount(codes)
    sums, counts = sums[counts > 0], counts[counts > 0]
    if sums.size < 2:
        return None
    means = np.concatenate([sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
                            for idx in resample_rows(sums.size, resamples, seed)])
    return percentile_interval(means, level)


_ERROR_TEXT = 300  # characters of the first error kept in a summary


def summarise_columns(columns: "ScoreColumns", metrics: list[str], category: str | None = None) -> list[MetricSummary]:
    """Each metric's summary from a run's score columns (run/score_columns.py), over one category's samples or all:
    the mean of the scored values (summed in the run's order, as a list's sum), their bootstrap interval, the
    unscored counted by reason, the errors and the first error's reason."""
    mask = columns.in_category(category)
    out = []
    for name in metrics:
        c = columns.columns[name]
        n = len(columns)
        present, error, reason = c.present[:n], c.error[:n], c.reason[:n]
        if mask is not None:
            present, error, reason = present[mask], error[mask], reason[mask]
        values = columns.values(name, category)
        clusters = columns.clusters(name, category)
        codes = np.bincount(reason[reason >= 0], minlength=len(columns.reasons))
        reasons = {columns.reasons[k]: int(v) for k, v in enumerate(codes) if v}
        first = columns.first_error(name, category)
        ci = bootstrap_ci(values, clusters=clusters)
        scored = int(values.size)
        out.append(
            MetricSummary(
                metric=name,
                mean=round(sum(values.tolist()) / scored, 6) if scored else None,
                scored=scored,
                unscored=int(present.sum()) - scored,
                unscored_reasons=dict(sorted(reasons.items())),
                ci_low=ci[0] if ci else None,
                ci_high=ci[1] if ci else None,
                errors=int(error.sum()),
                first_error=first[:_ERROR_TEXT] if first else None,
            )
        )
    return out


def categories_of(columns: "ScoreColumns", metrics: list[str]) -> dict[str, list[MetricSummary]]:
    """Each category's summaries, categories in sorted order."""
    return {c: summarise_columns(columns, metrics, c) for c in sorted(columns.categories)}


def paired_difference(base: Sequence[float], new: Sequence[float], level: float = CI_LEVEL,
                      resamples: int = RESAMPLES, seed: int = SEED,
                      clusters: np.ndarray | None = None) -> dict[str, float | int | None]:
    """Mean of new - base over paired samples, with a bootstrap interval that resamples the pairs together (and, with
    `clusters` as bootstrap_ci takes them, the pairs of one conversation together).

    Pairing removes the between-sample spread (easy and hard questions), so a real shift shows with far fewer
    samples than comparing two unpaired means would need.
    """
    if len(base) != len(new):
        raise ValueError("paired_difference needs two lists of the same length")
    d = np.asarray(new, dtype=float) - np.asarray(base, dtype=float)
    if d.size == 0:
        return {"pairs": 0, "diff": None, "ci_low": None, "ci_high": None}
    ci = bootstrap_ci(d, level, resamples, seed, clusters)
    return {"pairs": int(d.size), "diff": round(float(d.mean()), 6),
            "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None}
