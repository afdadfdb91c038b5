"""The curves `calibrate --html` draws from a result's scored rows: the ROC curve (binary labels) and the reliability
diagram (scores in bins against the share of rows labelled good, or the mean graded label, with a Wilson interval)."""
from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel

from ..run.stats import CI_LEVEL


class RocPoint(BaseModel):
    threshold: float | None  # a row is predicted good when its score >= threshold; None: the (0, 0) corner
    fpr: float  # share of the bad rows predicted good
    tpr: float  # share of the good rows predicted good


class Bin(BaseModel):
    low: float  # the bin's scores: [low, high), the last one [low, high]
    high: float
    rows: int
    predicted: float | None  # the mean score of its rows
    observed: float | None  # the share of its rows labelled good (graded: the mean label)
    ci_low: float | None = None  # the observed share's Wilson interval (binary labels)
    ci_high: float | None = None


def roc_points(labels: Sequence[float], scores: Sequence[float]) -> list[RocPoint]:
    """The ROC curve over the observed scores, from (0, 0) to (1, 1): one point per distinct score as threshold,
    highest first. Empty unless both classes are present."""
    good = sum(1 for y in labels if y >= 0.5)
    bad = len(labels) - good
    if not good or not bad:
        return []
    points = [RocPoint(threshold=None, fpr=0.0, tpr=0.0)]
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for y, s in zip(labels, scores) if s >= t and y >= 0.5)
        fp = sum(1 for y, s in zip(labels, scores) if s >= t and y < 0.5)
        points.append(RocPoint(threshold=t, fpr=round(fp / bad, 6), tpr=round(tp / good, 6)))
    return points


def wilson(successes: int, n: int, level: float = CI_LEVEL) -> tuple[float, float]:
    """The Wilson score interval of a share successes / n."""
    z = {0.9: 1.6449, 0.95: 1.96, 0.99: 2.5758}.get(level, 1.96)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


def reliability_bins(labels: Sequence[float], scores: Sequence[float], bins: int = 5,
                     binary: bool = True) -> list[Bin]:
    """Scores in `bins` equal bins over [0, 1]: each bin's mean score (predicted) and the share of its rows
    labelled good (binary, with its Wilson interval) or their mean label (graded). A calibrated scale puts each bin
    on the diagonal."""
    out = []
    for i in range(bins):
        low, high = i / bins, (i + 1) / bins
        inside = [(y, s) for y, s in zip(labels, scores) if low <= s < high or (i == bins - 1 and s == high)]
        n = len(inside)
        if not n:
            out.append(Bin(low=low, high=high, rows=0, predicted=None, observed=None))
            continue
        predicted = round(sum(s for _, s in inside) / n, 6)
        if binary:
            good = sum(1 for y, _ in inside if y >= 0.5)
            lo, hi = wilson(good, n)
            out.append(Bin(low=low, high=high, rows=n, predicted=predicted, observed=round(good / n, 6), ci_low=lo,
                           ci_high=hi))
        else:
            out.append(Bin(low=low, high=high, rows=n, predicted=predicted,
                           observed=round(sum(y for y, _ in inside) / n, 6)))
    return out
