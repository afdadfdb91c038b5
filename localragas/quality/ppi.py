"""Prediction-powered inference of a mean (PPI++; Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453): the judge's
mean over every unit, corrected by the mean residual (label - judge) on the labelled ones, with the judge's weight
lam tuned on the labels. The interval is valid whatever the judge's errors, as long as the labelled units are a
random draw of the population (docs/spot-checks.md#the-estimator). numpy and the standard library only (scipy.stats takes seconds to import); the authors' ppi_py is the
test oracle (tests/fast/quality/test_ppi.py), not a dependency.

With n labelled units (labels y_j, judge scores yhat_j, weights w_j normalised to sum n) and the judge's scores
yhat_all on all N units of the population:

    theta(lam) = lam * mean(yhat_all) + mean(w * (y - lam * yhat))
    se(lam)^2  = var(lam * yhat_all) / N + var(w * (y - lam * yhat)) / n      (population variances, ddof 0)
    lam*       = cov(w y, w yhat) / ((1 + n / N) var([w yhat; yhat_all]))    clipped to [0, 1]

(cov with both centred terms averaged over n, var with ddof 1 over the n + N stacked scores: ppi_py's formulas,
from a first estimate at lam = 1.) The interval is theta +- z_(1 - alpha/2) se, clipped to [0, 1] (a share).
lam = 0 is the labels alone; lam = 1 plain PPI.

The judge's term var / N is kept (ppi_py's): the interval then speaks of the population the samples come from, and is
slightly wide for this run's people's share alone (the judge's mean over this run has no sampling error of its own).
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ..data.spot_check_models import PPIResult

MIN_LABELS = 10
# Below 10 labelled draws a mean's normal interval is not trusted: with 0/1 labels the CLT interval under-covers
# badly when the share is far from 0.5 (n * share < 5), the spread of the residuals is itself estimated from a
# handful of values, and the tuned lam is noise. Below it the figures are shown, marked trustworthy: false, and the
# gate keeps the judge's mean (docs/spot-checks.md#the-minimum).

__all__ = ["MIN_LABELS", "PPIResult", "labels_only", "ppi_mean", "tuned_lam"]


def _z(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _weights(n: int, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights: one finite, non-negative number per label, not all zero")
    return w / w.sum() * n


def tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_all: np.ndarray, w: np.ndarray) -> float:
    """PPI++'s power-tuning weight (ppi_py's _calc_lam_glm for a mean, from the estimate at lam = 1), in [0, 1]."""
    n, big_n = y.size, yhat_all.size
    theta1 = yhat_all.mean() + (w * (y - yhat)).mean()
    g, gh, gu = w * (y - theta1), w * (yhat - theta1), yhat_all - theta1
    gc, ghc = g - g.mean(), gh - gh.mean()
    cov = (2.0 * (gc * ghc).sum()) / n
    var = float(np.var(np.concatenate([gh, gu]), ddof=1))
    if var <= 0 or not math.isfinite(var):
        return 0.0  # the judge gives every unit one score: it carries no information
    return float(np.clip(cov / (2.0 * (1.0 + n / big_n) * var), 0.0, 1.0))


def _identical_floor(y: np.ndarray, n: int) -> float:
    """The smallest standard error a mean of n identical labels is given: Agresti-Coull's p~ = (sum + 2) / (n + 4),
    sqrt(p~ (1 - p~) / n). 30 labels all 1 do not prove a share of exactly 1."""
    p = (float(y.sum()) + 2.0) / (n + 4.0)
    return math.sqrt(p * (1.0 - p) / n)


def _clip(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 6)


def _result(theta: float, se: float, z: float, lam: float, n: int, effective: float | None,
            notes: list[str]) -> PPIResult:
    trustworthy = n >= MIN_LABELS
    if not trustworthy:
        notes.append(f"{n} labelled draw(s), below the minimum of {MIN_LABELS}: not trustworthy")
    return PPIResult(mean=round(theta, 6), ci_low=_clip(theta - z * se), ci_high=_clip(theta + z * se),
                     lam=round(lam, 6), n=n, effective_labels=None if effective is None else round(effective, 2),
                     se=round(se, 6), trustworthy=trustworthy, note="; ".join(notes) or None)


def _clean(y, yhat, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[str]]:
    """Labels with a judge score: a labelled unit whose score is missing (NaN: its sample unscored) is not in the
    population the judge's mean is over, so it is left out, and said."""
    y = np.asarray(y, dtype=float).ravel()
    yhat = np.asarray(yhat, dtype=float).ravel()
    if y.shape != yhat.shape:
        raise ValueError("y and yhat_labelled must have one value per labelled unit")
    if np.any(~np.isfinite(y)):
        raise ValueError("labels must be finite numbers in [0, 1] (a skipped item is left out, not NaN)")
    keep = np.isfinite(yhat)
    notes = []
    if not keep.all():
        notes.append(f"{int((~keep).sum())} label(s) on units without a judge score left out (their samples are "
                     "unscored: not in the population)")
    w = None if weights is None else np.asarray(weights, dtype=float).ravel()[keep]
    return y[keep], yhat[keep], w, notes


def labels_only(y, weights=None, alpha: float = 0.05) -> PPIResult:
    """The mean of the labels alone (weighted when weights are given) with its normal interval: lam = 0."""
    y, _, w_raw, notes = _clean(y, np.zeros(np.asarray(y).size), weights)
    n = y.size
    if n == 0:
        return PPIResult(mean=None, n=0, note="no label")
    w = _weights(n, w_raw)
    theta = float((w * y).mean())
    se = float((w * y).std()) / math.sqrt(n)
    if np.all(y == y[0]):
        se = max(se, _identical_floor(y, n))
        notes.append("every label is the same: the interval's width is Agresti-Coull's, not zero")
    return _result(theta, se, _z(alpha), 0.0, n, float(n), notes)


def ppi_mean(y, yhat_labelled, yhat_all, *, weights=None, alpha: float = 0.05, lam: float | None = None) -> PPIResult:
    """The prediction-powered mean (PPI++) of the labels' population.

    y: the labels of the labelled units (0/1, or in [0, 1]: several reviewers' mean); yhat_labelled: the judge's
    score on each; yhat_all: the judge's score on every unit of the population (N); weights: one per label (the
    inverse of the unit's inclusion probability relative to the uniform design; --focus); lam: None tunes it
    (PPI++), 1 is plain PPI, 0 the labels alone."""
    y, yhat, w_raw, notes = _clean(y, yhat_labelled, weights)
    yhat_all = np.asarray(yhat_all, dtype=float).ravel()
    yhat_all = yhat_all[np.isfinite(yhat_all)]
    if yhat_all.size == 0:
        raise ValueError("yhat_all: the judge's scores on the population are needed (none given)")
    n, big_n = y.size, yhat_all.size
    if n == 0:
        return PPIResult(mean=None, n=0, note="no label")
    w = _weights(n, w_raw)
    if lam is None:
        lam = tuned_lam(y, yhat, yhat_all, w) if n >= 2 else 1.0
    elif not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    theta = float((lam * yhat_all).mean() + (w * (y - lam * yhat)).mean())
    se = math.sqrt(float((lam * yhat_all).std()) ** 2 / big_n + float((w * (y - lam * yhat)).std()) ** 2 / n)
    alone = float((w * y).std()) ** 2 / n
    if np.all(y == y[0]):
        floor = _identical_floor(y, n)
        if se < floor:
            notes.append("every label is the same: the interval's width is at least Agresti-Coull's")
        se = max(se, floor)
        alone = max(alone, floor ** 2)
    effective = n * alone / (se * se) if se > 0 else None
    return _result(theta, se, _z(alpha), lam, n, effective, notes)
