"""A run's results as they finish, by position: in a list for a run of up to SPILL_AFTER samples (as always), on disk
past that (data/result_store.py SampleStore, read back one at a time), with their score columns either way
(run/score_columns.py), so the summary, the intervals and the gate never need the results in memory.

The same path serves `localragas merge`: shards' results are put at their dataset positions.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..data.result_store import SPILL_AFTER, SampleStore
from ..data.schema import SampleResult
from .score_columns import ScoreColumns


class RunResults:
    """Results put at their positions (any order); done() gives them in order, the positions never filled left out.
    size: the positions expected (more may come: a reader that does not know them gives 0); past SPILL_AFTER of
    them, the results go to disk."""

    def __init__(self, size: int, metrics: Iterable[str], counters: Iterable[str] = ()):
        self._store: SampleStore | None = None
        self._slots: list[SampleResult | None] = [None] * min(size, SPILL_AFTER + 1)
        self.columns = ScoreColumns(metrics, size)
        self._totals = {k: 0.0 for k in counters}
        if size > SPILL_AFTER:
            self._spill(size)

    def _spill(self, size: int) -> None:
        """From here on, on disk: the results held so far go there first."""
        self._store = SampleStore(size)
        for i, r in enumerate(self._slots):
            if r is not None:
                self._store.put(i, r)
                for k in self._totals:
                    self._totals[k] += r.judge.get(k, 0)
        self._slots = []

    def put(self, i: int, result: SampleResult) -> None:
        if self._store is not None:
            self._store.put(i, result)
            for k in self._totals:  # summed as they come: a list's are summed in order (judge_totals)
                self._totals[k] += result.judge.get(k, 0)
        elif i >= SPILL_AFTER:
            self._spill(i + 1)
            self.put(i, result)
            return
        else:
            if i >= len(self._slots):
                self._slots.extend([None] * (i + 1 - len(self._slots)))
            self._slots[i] = result
        self.columns.put(i, result)

    def done(self) -> Sequence[SampleResult]:
        """The results in order: a list, or the sealed store (a SampleSequence) carrying its columns."""
        columns = self.columns.compact()
        if self._store is None:
            return [r for r in self._slots if r is not None]
        store = self._store.seal()
        store.columns = columns  # type: ignore[attr-defined]
        return store

    def totals(self, results: Sequence[SampleResult]) -> dict[str, float]:
        """Each judge counter summed over the results (meta.judge_totals)."""
        if self._store is None:
            return {k: round(sum(r.judge.get(k, 0) for r in results), 3) for k in self._totals}
        return {k: round(v, 3) for k, v in self._totals.items()}


def columns_of(results: Sequence[SampleResult], metrics: list[str]) -> ScoreColumns:
    """The score columns of a report's results: those a run's results carry when they hold every metric, else read
    from the results (one pass)."""
    carried: Any = getattr(results, "columns", None)
    if isinstance(carried, ScoreColumns) and set(metrics) <= set(carried.metrics) and len(carried) == len(results):
        return carried
    return ScoreColumns.of(results, metrics)


def spilled(results: Iterable[SampleResult], size: int, metrics: Iterable[str]) -> Sequence[SampleResult]:
    """Results (an iterable read once) as a run's: a list up to SPILL_AFTER, else on disk with their columns."""
    out = RunResults(size, metrics)
    for i, r in enumerate(results):
        out.put(i, r)
    return out.done()
