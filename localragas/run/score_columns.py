"""A run's scores as columns: what the summary, the intervals, the gate and the by-category table read, without the
results themselves (their evidence). About 15 bytes a sample a metric: 1M samples of 4 metrics hold 60 MB, where the
results would take ~14 GB.

Each metric has, by the sample's position in the run: its value (NaN when unscored or absent), whether the metric
is in the sample's results, whether it was scored, its unscored reason's kind (a code into `reasons`) and whether an
error caused it (data/unscored.py is_error_reason); the key of the conversation a sample is a turn of (stats.cluster_key:
8 bytes, what the intervals resample by); and the first error's full reason, overall and in each category (the one a
summary shows). Built as results finish (put: any order) or from any sequence of results (of: one pass).
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..data.schema import SampleResult
from ..data.unscored import is_error_reason, reason_kind
from .stats import NO_CLUSTER, cluster_codes, cluster_key

_NO_ERROR = "error: no reason recorded"  # an error without a reason, as summaries name it


class _Column:
    """One metric's columns."""

    def __init__(self, size: int):
        self.value = np.full(size, np.nan)
        self.present = np.zeros(size, dtype=bool)
        self.scored = np.zeros(size, dtype=bool)
        self.error = np.zeros(size, dtype=bool)
        self.reason = np.full(size, -1, dtype=np.int32)  # code into ScoreColumns.reasons; -1: none
        self.first_error: dict[int, tuple[int, str]] = {}  # category code (-1: none) -> (position, reason)

    def grow(self, size: int) -> None:
        for name, fill in (("value", np.nan), ("present", False), ("scored", False), ("error", False),
                           ("reason", -1)):
            old = getattr(self, name)
            new = np.full(size, fill, dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)


class ScoreColumns:
    """The score columns of `metrics` over a run's results (see the module's docstring)."""

    def __init__(self, metrics: Iterable[str], size: int = 0):
        self.metrics = list(metrics)
        self._capacity = max(size, 16)
        self.columns = {m: _Column(self._capacity) for m in self.metrics}
        self.category = np.full(self._capacity, -1, dtype=np.int32)  # code into categories; -1: none
        self.conversation = np.full(self._capacity, NO_CLUSTER, dtype=np.int64)  # stats.cluster_key
        self.filled = np.zeros(self._capacity, dtype=bool)
        self.categories: list[str] = []
        self.reasons: list[str] = []
        self._codes: dict[str, int] = {}
        self._category_codes: dict[str, int] = {}
        self.size = 0  # positions up to the last one filled

    @classmethod
    def of(cls, results: Iterable[SampleResult], metrics: Iterable[str]) -> "ScoreColumns":
        size = len(results) if hasattr(results, "__len__") else 0  # type: ignore[arg-type]
        out = cls(metrics, size)
        for i, r in enumerate(results):
            out.put(i, r)
        return out.compact()

    def _grow(self, i: int) -> None:
        size = max(i + 1, 2 * self._capacity)
        for c in self.columns.values():
            c.grow(size)
        for name, fill in (("category", -1), ("conversation", NO_CLUSTER), ("filled", False)):
            old = getattr(self, name)
            new = np.full(size, fill, dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)
        self._capacity = size

    def _code(self, table: list[str], codes: dict[str, int], text: str) -> int:
        if text not in codes:
            codes[text] = len(table)
            table.append(text)
        return codes[text]

    def put(self, i: int, result: SampleResult) -> None:
        """The scores of the result at position i."""
        if i >= self._capacity:
            self._grow(i)
        self.filled[i] = True
        self.size = max(self.size, i + 1)
        cat = self._code(self.categories, self._category_codes, result.category) if result.category else -1
        self.category[i] = cat
        self.conversation[i] = cluster_key(result)
        for name, c in self.columns.items():
            m = result.metrics.get(name)
            if m is None:
                continue
            c.present[i] = True
            if m.value is not None:
                c.value[i], c.scored[i] = m.value, True
                continue
            if m.unscored:
                c.reason[i] = self._code(self.reasons, self._codes, reason_kind(m.unscored))
            if is_error_reason(m.unscored):
                c.error[i] = True
                for key in (-1, cat) if cat >= 0 else (-1,):
                    if key not in c.first_error or c.first_error[key][0] > i:
                        c.first_error[key] = (i, m.unscored or _NO_ERROR)

    def compact(self) -> "ScoreColumns":
        """The filled positions only, in order (as a run leaves out the samples it never finished)."""
        keep = np.flatnonzero(self.filled[:self.size])
        if len(keep) == self.size == self._capacity:
            return self
        rank = np.full(self.size, -1, dtype=np.int64)
        rank[keep] = np.arange(len(keep))
        for c in self.columns.values():
            for name in ("value", "present", "scored", "error", "reason"):
                setattr(c, name, getattr(c, name)[keep])
            c.first_error = {k: (int(rank[p]), text) for k, (p, text) in c.first_error.items()}
        self.category, self.filled = self.category[keep], self.filled[keep]
        self.conversation = self.conversation[keep]
        self.size = self._capacity = len(keep)
        return self

    def __len__(self) -> int:
        return self.size

    def in_category(self, category: str | None) -> np.ndarray | None:
        """The positions' mask of a category (None: every position)."""
        if category is None:
            return None
        return self.category[:self.size] == self._category_codes.get(category, -2)

    def category_counts(self) -> dict[str, int]:
        """Category -> samples, in sorted order (a sample without one is in none)."""
        counts = np.bincount(self.category[:self.size][self.category[:self.size] >= 0],
                             minlength=len(self.categories))
        return {c: int(counts[self._category_codes[c]]) for c in sorted(self.categories)}

    def first_error(self, metric: str, category: str | None) -> str | None:
        key = -1 if category is None else self._category_codes.get(category, -2)
        got = self.columns[metric].first_error.get(key)
        return got[1] if got else None

    def values(self, metric: str, category: str | None = None) -> np.ndarray:
        """The metric's scored values, in the run's order (of one category's samples, or of all)."""
        c = self.columns[metric]
        scored = c.scored[:self.size]
        mask = self.in_category(category)
        return c.value[:self.size][scored if mask is None else scored & mask]

    def clusters(self, metric: str, category: str | None = None) -> np.ndarray | None:
        """The cluster codes of values(metric, category), position for position (stats.cluster_codes: a
        conversation's turns share one; None when none of them is a turn)."""
        c = self.columns[metric]
        scored = c.scored[:self.size]
        mask = self.in_category(category)
        return cluster_codes(self.conversation[:self.size][scored if mask is None else scored & mask])

    def conversation_counts(self) -> tuple[int, int]:
        """(conversations, turns): how many conversations the run's samples are turns of, and how many turns."""
        keys = self.conversation[:self.size]
        turns = keys[keys != NO_CLUSTER]
        return int(np.unique(turns).size), int(turns.size)
