"""How well a metric's scores agree with human labels: the figures of `localragas calibrate`, with bootstrap CIs.

- binary labels (1 good / 0 bad): ROC AUC (the rank formula, ties averaged: the chance that a random good row
  scores above a random bad one, ties counting half); balanced accuracy at the gate threshold (a row is predicted
  good when its score >= the threshold, as the gate holds a mean >= its threshold) and at the best threshold, which
  Youden's J (TPR - FPR) picks among the observed scores, and which is suggested as a gate threshold.
- graded labels (a float in [0, 1]): Spearman correlation (Pearson correlation of average ranks) and mean absolute
  error.
- pairwise labels (two answers to one question, humans preferred one): the fraction of pairs the scores order as
  the humans did, a tie counting half (the measure of the RAGAS paper).

Each figure is given twice: over the scored rows, and with the unscored rows counted wrong (binary: predicted as
the wrong class, i.e. ranked below every good row if the row is good and above every bad row if bad; graded:
absolute error 1 and the rank farthest from its label's; pairwise: a pair with an unscored member is misordered).

Intervals are percentile bootstraps with localragas.run.stats's settings (level, resamples, seed): rows are resampled
(pairs, for pairwise). A resample in which a figure is undefined (one class left, all ranks equal) is left out.
The balanced accuracy at the best threshold re-picks its threshold in every resample, and being picked on the same
rows it is measured on, it is optimistic; check a suggested threshold on data kept aside.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from ..run.stats import CI_LEVEL, RESAMPLES, SEED, bootstrap_ci, percentile_interval, resample_rows

Kind = Literal["binary", "graded", "pairwise"]
KINDS: tuple[str, ...] = ("binary", "graded", "pairwise")
_MIN_VALID = 0.5  # an interval needs the figure defined in at least this share of the resamples

# what each figure is called in tables, and whether higher is better
MEASURES: dict[str, tuple[str, bool]] = {
    "roc_auc": ("ROC AUC", True),
    "balanced_accuracy_at_gate": ("balanced accuracy @ gate", True),
    "balanced_accuracy_at_best": ("balanced accuracy @ best", True),
    "spearman": ("Spearman", True),
    "mae": ("MAE", False),
    "pairwise_agreement": ("pairs ordered right", True),
}


class Estimate(BaseModel):
    """One agreement figure with its interval; None with a note when it is undefined."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0  # rows (pairs) it is computed over
    note: str | None = None  # why the value or the interval is missing, or what was left out


class Agreement(BaseModel):
    kind: Kind
    rows: int  # rows (pairs, for pairwise) with a label
    scored: int
    unscored: int
    measures: dict[str, Estimate] = Field(default_factory=dict)  # over the scored rows
    counted_wrong: dict[str, Estimate] = Field(default_factory=dict)  # unscored rows counted wrong
    gate_threshold: float | None = None  # binary
    suggested_threshold: float | None = None  # binary: Youden's J over the scored rows
    suggested_note: str | None = None
    youden_j: float | None = None
    classes: dict[str, int] = Field(default_factory=dict)  # binary: good / bad rows


# --- the formulas -----------------------------------------------------------------------------------------------------
# Hand-written, not sklearn's roc_auc_score / scipy's rankdata, spearmanr (the same figures: test_agreement.py): each
# runs 2,000 times a figure; roc_auc_score is 50x slower (+3 s a figure) and now and then rounds the 6th decimal apart.

def average_ranks(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks ([10, 20, 20, 30] -> [1, 2.5, 2.5, 4])."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="mergesort")
    sx = x[order]
    new = np.r_[True, sx[1:] != sx[:-1]] if x.size else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], x.size]
    group = np.cumsum(new) - 1
    ranks = np.empty(x.size)
    ranks[order] = ((starts + 1 + ends) / 2.0)[group]
    return ranks


def _classes(labels: np.ndarray) -> tuple[int, int]:
    pos = int(labels.sum())
    return pos, int(labels.size - pos)


def roc_auc(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """(sum of the good rows' average ranks - P(P+1)/2) / (P * N); None unless both classes are present."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    pos, neg = _classes(y)
    if pos == 0 or neg == 0:
        return None
    r = average_ranks(s)
    return float((r[y].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def balanced_accuracy(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray,
                      threshold: float) -> float | None:
    """(TPR + TNR) / 2 with a row predicted good when score >= threshold; None unless both classes are present."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    pos, neg = _classes(y)
    if pos == 0 or neg == 0:
        return None
    predicted = s >= threshold
    return float(((predicted & y).sum() / pos + (~predicted & ~y).sum() / neg) / 2.0)


def best_threshold(labels: Sequence[int] | np.ndarray,
                   scores: Sequence[float] | np.ndarray) -> tuple[float, float] | None:
    """(threshold, Youden's J = TPR - FPR) maximising J over the observed finite scores (predicted good when
    score >= threshold); of equally good thresholds the lowest. None unless both classes and a finite score exist.
    The balanced accuracy there is (1 + J) / 2."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    pos, neg = _classes(y)
    candidates = np.unique(s[np.isfinite(s)])
    if pos == 0 or neg == 0 or candidates.size == 0:
        return None
    predicted = s[None, :] >= candidates[:, None]  # (thresholds, rows)
    j = (predicted & y).sum(axis=1) / pos - (predicted & ~y).sum(axis=1) / neg
    best = int(np.argmax(j))  # the first maximum: the lowest threshold
    return float(candidates[best]), float(j[best])


def best_balanced_accuracy(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    got = best_threshold(labels, scores)
    if got is None and not np.isfinite(np.asarray(scores, dtype=float)).any():
        return balanced_accuracy(labels, scores, 0.0)  # only unscored rows counted wrong: any threshold gives this
    return None if got is None else (1.0 + got[1]) / 2.0


def spearman(labels: Sequence[float] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """Pearson correlation of the average ranks; None with fewer than 2 rows or when either side is constant."""
    a, b = np.asarray(labels, dtype=float), np.asarray(scores, dtype=float)
    if a.size < 2:
        return None
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    if denominator == 0:
        return None
    return float(np.clip((ra * rb).sum() / denominator, -1.0, 1.0))


def pair_outcomes(better: Sequence[float | None], worse: Sequence[float | None]) -> np.ndarray:
    """Per pair: 1 if the preferred answer scores higher, 0.5 on a tie, 0 if lower or a member is unscored."""
    out = np.zeros(len(better))
    for i, (b, w) in enumerate(zip(better, worse)):
        if b is None or w is None:
            continue
        out[i] = 1.0 if b > w else 0.5 if b == w else 0.0
    return out


def figure_gain(figure: Callable[..., float | None]) -> Callable[..., float | None]:
    """stat(labels, base, new) = figure(labels, new) - figure(labels, base), None where either is undefined (a
    resample with one label): the paired difference of two score columns on the same rows, for bootstrap_statistic."""
    def gain(labels: np.ndarray, base: np.ndarray, new: np.ndarray) -> float | None:
        a, b = figure(labels, base), figure(labels, new)
        return None if a is None or b is None else b - a
    return gain


# --- bootstrap --------------------------------------------------------------------------------------------------------

def bootstrap_statistic(stat: Callable[..., float | None], arrays: Sequence[np.ndarray], level: float = CI_LEVEL,
                        resamples: int = RESAMPLES, seed: int = SEED) -> tuple[tuple[float, float] | None, str | None]:
    """Percentile interval of stat(*arrays) over row resamples; resamples where stat is None are left out.

    ((low, high) or None, a note on what was left out or why there is no interval)."""
    n = len(arrays[0])
    if n < 2:
        return None, "fewer than 2 rows: no interval"
    values: list[float] = []
    for chunk in resample_rows(n, resamples, seed):
        for idx in chunk:
            v = stat(*(a[idx] for a in arrays))
            if v is not None and np.isfinite(v):
                values.append(v)
    dropped = resamples - len(values)
    if len(values) < _MIN_VALID * resamples:
        return None, f"undefined in {dropped} of {resamples} resamples: no interval"
    note = f"{dropped} of {resamples} resamples left out (undefined there)" if dropped else None
    return percentile_interval(np.asarray(values), level), note


def _estimate(stat: Callable[..., float | None], arrays: Sequence[np.ndarray], why_undefined: str | None,
              level: float, resamples: int, seed: int) -> Estimate:
    n = len(arrays[0])
    value = stat(*arrays) if n else None
    if value is None:
        return Estimate(n=n, note=why_undefined or ("no rows" if n == 0 else "undefined"))
    ci, note = bootstrap_statistic(stat, arrays, level, resamples, seed)
    return Estimate(value=round(float(value), 6), ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None,
                    n=n, note=note)


def _mean_estimate(values: np.ndarray, level: float, resamples: int, seed: int, empty: str = "no rows") -> Estimate:
    if values.size == 0:
        return Estimate(n=0, note=empty)
    ci = bootstrap_ci(values, level, resamples, seed)
    return Estimate(value=round(float(values.mean()), 6), ci_low=ci[0] if ci else None,
                    ci_high=ci[1] if ci else None, n=int(values.size),
                    note=None if ci else "fewer than 2 rows: no interval")


def _split(scores: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """(mask of scored rows, scores with NaN for unscored)."""
    s = np.array([np.nan if v is None else float(v) for v in scores], dtype=float)
    return ~np.isnan(s), s


# --- per kind ---------------------------------------------------------------------------------------------------------

def _why_binary(y: np.ndarray, empty: str) -> str | None:
    if y.size == 0:
        return empty
    pos, neg = _classes(y)
    if pos == 0 or neg == 0:
        return f"only one class among the rows ({pos} good, {neg} bad): undefined"
    return None


def binary_agreement(labels: Sequence[int], scores: Sequence[float | None], threshold: float | None,
                     level: float = CI_LEVEL, resamples: int = RESAMPLES, seed: int = SEED) -> Agreement:
    """labels 1 (good) / 0 (bad); scores None where unscored; threshold: the metric's gate threshold."""
    y = np.asarray(labels, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("binary labels must be 0 or 1")
    y = y.astype(bool)
    ok, s = _split(scores)
    ys, ss = y[ok], s[ok]
    # unscored counted wrong: a good row below every score, a bad row above every score
    sw = np.where(ok, s, np.where(y, -np.inf, np.inf))
    pos, neg = _classes(y)
    out = Agreement(kind="binary", rows=int(y.size), scored=int(ok.sum()), unscored=int((~ok).sum()),
                    gate_threshold=threshold, classes={"good": pos, "bad": neg})
    for target, (yy, xx, empty) in (("measures", (ys, ss, "no scored rows")), ("counted_wrong", (y, sw, "no rows"))):
        why = _why_binary(yy, empty)
        figures = {"roc_auc": _estimate(roc_auc, (yy, xx), why, level, resamples, seed)}
        if threshold is not None:
            figures["balanced_accuracy_at_gate"] = _estimate(
                lambda a, b: balanced_accuracy(a, b, threshold), (yy, xx), why, level, resamples, seed)
        figures["balanced_accuracy_at_best"] = _estimate(best_balanced_accuracy, (yy, xx), why, level, resamples,
                                                         seed)
        setattr(out, target, figures)
    best = best_threshold(ys, ss)
    if best is None:
        out.suggested_note = _why_binary(ys, "no scored rows") or "no finite score"
    else:
        out.suggested_threshold, out.youden_j = round(best[0], 6), round(best[1], 6)
        if best[1] <= 0:
            out.suggested_note = "the scores do not separate the classes (Youden's J = 0)"
    return out


def graded_agreement(labels: Sequence[float], scores: Sequence[float | None], level: float = CI_LEVEL,
                     resamples: int = RESAMPLES, seed: int = SEED) -> Agreement:
    """labels in [0, 1]; scores None where unscored."""
    y = np.asarray(labels, dtype=float)
    ok, s = _split(scores)
    out = Agreement(kind="graded", rows=int(y.size), scored=int(ok.sum()), unscored=int((~ok).sum()))
    # unscored counted wrong: the rank farthest from its label's (bottom if its label is in the upper half), error 1
    upper = average_ranks(y) >= (y.size + 1) / 2.0
    sw = np.where(ok, s, np.where(upper, -np.inf, np.inf))
    errors = np.where(ok, np.abs(np.nan_to_num(s) - y), 1.0)
    for target, (yy, xx, ee, empty) in (("measures", (y[ok], s[ok], errors[ok], "no scored rows")),
                                        ("counted_wrong", (y, sw, errors, "no rows"))):
        why = None
        if yy.size < 2:
            why = empty if yy.size == 0 else "fewer than 2 rows: undefined"
        elif np.all(xx == xx[0]):
            why = "all scores are equal: no ranking"
        elif np.all(yy == yy[0]):
            why = "all labels are equal: no ranking"
        setattr(out, target, {"spearman": _estimate(spearman, (yy, xx), why, level, resamples, seed),
                              "mae": _mean_estimate(ee, level, resamples, seed, empty)})
    return out


def pairwise_agreement(better: Sequence[float | None], worse: Sequence[float | None], level: float = CI_LEVEL,
                       resamples: int = RESAMPLES, seed: int = SEED) -> Agreement:
    """better[i] / worse[i]: the scores of pair i's preferred and other answer (None where unscored)."""
    if len(better) != len(worse):
        raise ValueError("pairwise_agreement needs as many better as worse scores")
    complete = np.array([b is not None and w is not None for b, w in zip(better, worse)], dtype=bool)
    outcomes = pair_outcomes(better, worse)
    out = Agreement(kind="pairwise", rows=len(better), scored=int(complete.sum()),
                    unscored=int((~complete).sum()))
    out.measures = {"pairwise_agreement": _mean_estimate(outcomes[complete], level, resamples, seed,
                                                         "no pair with both answers scored")}
    out.counted_wrong = {"pairwise_agreement": _mean_estimate(outcomes, level, resamples, seed)}
    return out
