from __future__ import annotations

import csv
import io
from pathlib import Path

from ..data.schema import Report
from ..core.atomic_write import write_atomic

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """Neutralise spreadsheet formula injection in text cells."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_csv(report: Report, path: str | Path) -> None:
    """One row per sample: id, category, each metric's value, and each metric's unscored reason."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "category", *report.metrics, *(f"{m}_unscored" for m in report.metrics), "seconds"])
    for s in report.samples:
        got = [s.metrics.get(m) for m in report.metrics]
        values = ["" if r is None or r.value is None else f"{r.value:.6f}" for r in got]
        reasons = ["" if r is None else (r.unscored or "") for r in got]
        w.writerow([_cell(x) for x in [s.id, s.category or "", *values, *reasons, s.seconds]])
    write_atomic(path, buf.getvalue())
