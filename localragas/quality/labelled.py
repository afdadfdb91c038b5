"""Labelled rows for `localragas calibrate`: samples (the usual fields) plus `label: {metric, value, kind}`; pairwise
rows add `pair` and `better` (localragas.quality.agreement says what each kind measures). Files and rows given in
Python (a list of dicts, a pandas DataFrame, a datasets.Dataset, where a table may hold the label as the columns
label.metric, label.kind, label.value) are checked by one reader, read_labelled: errors name the file and line (or
row) and field.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agreement import KINDS
from ..data.column_map import ColumnCheck, check_columns
from ..data.dataset import DEFAULT_MAX_INPUT_BYTES, read_records
from ..core.errors import DatasetError
from ..metrics import all_metrics
from ..data.sample_record import SampleIds, sample_from_dict
from ..data.schema import Sample


@dataclass
class LabelledRow:
    line: int | None
    sample: Sample
    metric: str
    kind: str
    value: float
    pair: str | None = None
    better: bool | None = None


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


_FLAT_LABEL = ("label.metric", "label.kind", "label.value")  # a table's label columns (pandas.json_normalize)


def _label_object(record: Mapping[str, Any], shown: str, line: int | None) -> Any:
    """The row's label: its `label` object, or one made of its label.metric / label.kind / label.value columns."""
    flat = {name.split(".", 1)[1]: record[name] for name in _FLAT_LABEL if name in record}
    if not flat:
        if record.get("label") is None:
            raise DatasetError(shown, line, "label", "missing: a labelled row needs label: {metric, value, kind} "
                                                     "(in a table: columns label.metric, label.kind, label.value)")
        return record["label"]
    if record.get("label") is not None:
        raise DatasetError(shown, line, "label", "given twice, as label and as columns label.metric, label.kind, "
                                                 "label.value: keep one")
    return flat


def _label(record: Mapping[str, Any], shown: str, line: int | None, metrics: dict | None) -> tuple[str, str, float]:
    """(metric, kind, value) of a row's label; metrics: the names label.metric may take (None: any name)."""
    label = _label_object(record, shown, line)
    if not isinstance(label, Mapping):
        raise DatasetError(shown, line, "label", f"expected an object {{metric, value, kind}}, got {_type(label)}")
    metric, kind, value = label.get("metric"), label.get("kind"), label.get("value")
    if not isinstance(metric, str) or not metric.strip():
        raise DatasetError(shown, line, "label.metric", f"expected a metric name, got {metric!r}")
    if metrics is not None and metric not in metrics:
        raise DatasetError(shown, line, "label.metric", f"unknown metric {metric!r}; valid: {', '.join(metrics)} "
                                                        "(or score the rows with another metric: --metric NAME)")
    if kind not in KINDS:
        raise DatasetError(shown, line, "label.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "pairwise":
        return metric, kind, float(bool(record.get("better")))  # the preference is `better`; value is not used
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)):
        raise DatasetError(shown, line, "label.value", f"expected a number, got {_type(value)}")
    if kind == "binary" and value not in (0, 1):
        raise DatasetError(shown, line, "label.value", f"a binary label is 0 or 1, got {value!r}")
    if kind == "graded" and not 0.0 <= value <= 1.0:
        raise DatasetError(shown, line, "label.value", f"a graded label is in [0, 1], got {value!r}")
    return metric, kind, float(value)


@dataclass
class LabelledSource:
    """The checked rows of one labelled file, or of labelled rows given in Python (a DataFrame, dicts, a Dataset)."""

    name: str  # the file's path, or what rows given in Python are called in errors ("DataFrame", "samples")
    rows: list[LabelledRow]
    path: Path | None = None  # a file's
    sha256: str | None = None  # a file's

    def digest(self) -> str:
        """The file's sha256, or (rows given in Python) one of the rows as read: what their checkpoint is named by."""
        if self.sha256:
            return self.sha256
        rows = [[r.sample.model_dump(), r.metric, r.kind, r.value, r.pair, r.better] for r in self.rows]
        return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def read_labelled(data: Any, *, any_metric: bool = False, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                  columns: Mapping[str, str] | None = None) -> LabelledSource:
    """The rows of a labelled file, or of labelled rows given in Python, validated: sample fields as for `eval`
    (any name a file or evaluate() accepts, and `columns`), then the label (`label: {metric, kind, value}`, or in a
    table the columns label.metric, label.kind, label.value), pair and better.

    data: a path (.jsonl, .json, .csv), or what localragas.data.sample_inputs.python_records reads (a list of dicts, a
    pandas DataFrame, a datasets.Dataset). Errors name the file and line, or the row (from 1), and the field. Pairs
    must hold exactly two rows of one metric, one of them better.
    any_metric: accept a label.metric localragas does not compute (the rows are scored with another metric).
    max_input_bytes: a larger file is refused, as is a path that is not a regular file (load_samples)."""
    from ..judges import catalogue  # noqa: PLC0415
    from ..data.sample_inputs import numbered_rows, python_records  # noqa: PLC0415

    columns = check_columns(columns)
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        shown, unit, records = str(data), "line", read_records(path, max_input_bytes)
        if records:
            ColumnCheck(columns, shown).over(r for _, r in records)
        rows = _labelled_rows(records, shown, unit, any_metric, columns)
        return LabelledSource(shown, rows, path, catalogue.sha256_of(path))
    shown, records = python_records(data, columns, samples=False)
    with numbered_rows():
        return LabelledSource(shown, _labelled_rows(records, shown, "row", any_metric, columns))


def load_labelled(data: Any, any_metric: bool = False, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                  columns: Mapping[str, str] | None = None) -> list[LabelledRow]:
    """read_labelled(...).rows: the checked rows of a labelled file (or of labelled rows given in Python)."""
    return read_labelled(data, any_metric=any_metric, max_input_bytes=max_input_bytes, columns=columns).rows


def _labelled_rows(records: Iterable[tuple[int | None, Any]], shown: str, unit: str, any_metric: bool,
                   columns: Mapping[str, str]) -> list[LabelledRow]:
    """Each record (with the line, or row, it is at) as a sample and its label; the pairs checked."""
    metrics = None if any_metric else all_metrics()
    rows: list[LabelledRow] = []
    ids = SampleIds(shown, unit)
    for line, record in records:
        sample = ids.claim(sample_from_dict(record, path=shown, line=line, columns=columns), line)
        metric, kind, value = _label(record, shown, line, metrics)
        pair = better = None
        if kind == "pairwise":
            pair, better = record.get("pair"), record.get("better")
            if isinstance(pair, float) and pair.is_integer():
                pair = int(pair)  # a table's integer column with a gap (pandas makes it float)
            if isinstance(pair, bool) or not isinstance(pair, (str, int)) or not str(pair).strip():
                raise DatasetError(shown, line, "pair", f"a pairwise row needs a pair id (string), got {pair!r}")
            if not isinstance(better, bool):
                message = f"a pairwise row needs better: true or false, got {_type(better)}"
                raise DatasetError(shown, line, "better", message)
            pair = str(pair).strip()
        rows.append(LabelledRow(line, sample, metric, kind, value, pair, better))
    if not rows:
        raise DatasetError(shown, None, None, "no samples")
    _check_pairs(rows, shown, unit)
    return rows


def _check_pairs(rows: list[LabelledRow], shown: str, unit: str = "line") -> None:
    members: dict[tuple[str, str], list[LabelledRow]] = {}
    for r in rows:
        if r.kind == "pairwise":
            group = members.setdefault((r.metric, r.pair), [])  # type: ignore[arg-type]
            group.append(r)
            if len(group) > 2:
                raise DatasetError(shown, r.line, "pair", f"pair '{r.pair}' has more than two rows "
                                                          f"({unit}s {', '.join(str(m.line) for m in group)})")
    for (_, pair), group in members.items():
        if len(group) != 2:
            raise DatasetError(shown, group[0].line, "pair", f"pair '{pair}' has one row; a pair needs two")
        if group[0].better == group[1].better:
            raise DatasetError(shown, group[1].line, "better", f"pair '{pair}': exactly one of its two rows must "
                                                               f"have better: true")


def take(rows: list[LabelledRow], limit: int | None) -> list[LabelledRow]:
    """The first `limit` rows in file order, pairs kept whole: a pair counts at its first row, and a pair begun
    within the limit is taken with both rows (so --limit 5 on a pairwise file takes 3 pairs)."""
    if not limit:
        return rows
    units: dict[object, list[LabelledRow]] = {}
    for i, r in enumerate(rows):
        units.setdefault(("pair", r.metric, r.pair) if r.kind == "pairwise" else i, []).append(r)
    kept: list[LabelledRow] = []
    for unit in units.values():
        if len(kept) >= limit:
            break
        kept.extend(unit)
    order = {id(r): i for i, r in enumerate(rows)}
    return sorted(kept, key=lambda r: order[id(r)])
