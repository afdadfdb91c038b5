from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterator

from ..data.report_views import text_cells, text_columns, turn_cells, turn_columns
from ..data.schema import Report
from ..core.atomic_write import write_atomic

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """Neutralise spreadsheet formula injection in text cells."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_pieces(report: Report, rows: int = 1000) -> Iterator[str]:
    """The CSV text, `rows` samples at a time: one row per sample: id, category, a turn's conversation and turn number
    when the results hold conversations (data/report_views.py turn_columns), its text when the run kept it (question,
    answer, contexts as a JSON list, reference: text_columns), each metric's value, and each metric's unscored
    reason."""
    buf = io.StringIO()
    w = csv.writer(buf)
    text, place = text_columns(report.meta), turn_columns(report)
    w.writerow(["id", "category", *place, *text, *report.metrics, *(f"{m}_unscored" for m in report.metrics),
                "seconds"])
    for n, s in enumerate(report.samples, 1):
        got = [s.metrics.get(m) for m in report.metrics]
        values = ["" if r is None or r.value is None else f"{r.value:.6f}" for r in got]
        reasons = ["" if r is None else (r.unscored or "") for r in got]
        cells = [json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v or "" for v in text_cells(s)]
        turn = ["" if v is None else v for v in turn_cells(s)][:len(place)]
        w.writerow([_cell(x) for x in [s.id, s.category or "", *turn, *cells[:len(text)], *values, *reasons,
                                        s.seconds]])
        if n % rows == 0:
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue()


def write_csv(report: Report, path: str | Path) -> None:
    """One row per sample (csv_pieces), written as they are read: a large report is never one string in memory."""
    write_atomic(path, csv_pieces(report))
