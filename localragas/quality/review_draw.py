"""Which items people check: the sampling design of spot checks (docs/spot-checks.md#the-design).

Per metric, `n` draws with replacement, seeded: a draw picks one of the metric's scored samples uniformly, then one
of its items uniformly. Draw j depends only on the seed, the metric and j, so the first k draws of a plan are the same
whatever n. A metric's mean is the mean over samples of each sample's mean over its items, and a draw's item has
exactly that expectation: E[y] = (1/S) sum_s (1/K_s) sum_i y_si. So the labelled draws are iid with the people's
mean as their expectation, and the judge's score on the same draws has the judge's mean (the report's) as its
expectation: the prediction-powered estimator (quality/ppi.py) applies as it is, no weights.

Context precision's score is the average precision of the ranked chunks, not a mean of them: its unit is the sample.
A draw picks a sample uniformly and every chunk of it is labelled; the people's average precision of the sample (from
their chunk labels, metrics/context_precision.py average_precision) is compared with the judge's (the sample's score).
Each chunk of a drawn sample is a Draw with the draw's order and the sample's probability.

An item drawn twice is shown once (`shown`) and its label counts for each of its draws.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterable, Literal

import numpy as np

from .review_items import SAMPLE_UNIT, ReviewItem

Focus = Literal["uniform", "uncertain"]
# draws per metric: 50 labels give a prediction-powered interval ~0.25 wide, 30 ~0.31 (issue 48's simulation)
DEFAULT_DRAWS = 50


@dataclass(frozen=True)
class Draw:
    """One draw of the plan: its item, its order in the plan (0, 1, ...), the item's probability on one draw
    (for context precision: the sample's)."""

    item: ReviewItem
    order: int
    p: float


@dataclass(frozen=True)
class Shown:
    """An item as a reviewer sees it: once, with the orders of all its draws (its label counts for each)."""

    item: ReviewItem
    orders: tuple[int, ...]
    p: float
    seed: int
    focus: Focus = "uniform"


def by_sample(items: Iterable[ReviewItem], metric: str) -> list[list[ReviewItem]]:
    """The metric's items grouped by sample, samples in the order first met (the population of the draws)."""
    groups: dict[str, list[ReviewItem]] = {}
    for it in items:
        if it.metric == metric:
            groups.setdefault(it.sample_id, []).append(it)
    return list(groups.values())


def _rng(seed: int, metric: str) -> np.random.Generator:
    """A stream per (seed, metric): adding a metric to a plan leaves the others' draws as they were."""
    return np.random.default_rng([seed, zlib.crc32(metric.encode())])


def draw(items: Iterable[ReviewItem], metric: str, n: int = DEFAULT_DRAWS, seed: int = 0) -> list[Draw]:
    """The first n draws of the metric's uniform plan (see the module's docstring). [] when it has no item."""
    if n < 0:
        raise ValueError("n must be >= 0")
    groups = by_sample(items, metric)
    if not groups:
        return []
    rng = _rng(seed, metric)
    s_count = len(groups)
    out: list[Draw] = []
    for order in range(n):
        s = int(rng.integers(s_count))
        i = int(rng.integers(len(groups[s])))  # drawn for every metric, so the streams stay aligned
        group = groups[s]
        if metric in SAMPLE_UNIT:
            out.extend(Draw(it, order, 1.0 / s_count) for it in group)
        else:
            out.append(Draw(group[i], order, 1.0 / (s_count * len(group))))
    return out


def shown(draws: Iterable[Draw], seed: int = 0, focus: Focus = "uniform") -> list[Shown]:
    """Each drawn item once, in the order of its first draw, with the orders of all its draws."""
    seen: dict[str, tuple[ReviewItem, list[int], float]] = {}
    for d in draws:
        entry = seen.setdefault(d.item.key, (d.item, [], d.p))
        if d.order not in entry[1]:
            entry[1].append(d.order)
    return [Shown(item, tuple(orders), p, seed, focus) for item, orders, p in seen.values()]


def plan(items: Iterable[ReviewItem], metrics: Iterable[str], n: int = DEFAULT_DRAWS, seed: int = 0) -> list[Shown]:
    """The items to show for each metric's first n draws, metric by metric (uniform design)."""
    pool = list(items)
    return [s for m in metrics for s in shown(draw(pool, m, n, seed), seed)]
