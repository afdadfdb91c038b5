"""A column mapping (`columns`: canonical field -> the user's column name, e.g. {"question": "query"}): checked,
and followed over a reader's records, so a mapped column the data lacks is an error, never a field left unread.
The one place for files (data/dataset.py), rows given in Python (data/sample_inputs.py) and labelled rows
(quality/calibration.py)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import ConfigError, DatasetError
from .schema import FIELD_ALIASES

REQUIRED_FIELDS = ("question", "contexts", "answer")


def type_name(value: Any) -> str:
    """A value's type as an error names it ("null" for None)."""
    return "null" if value is None else type(value).__name__


def check_columns(columns: Any) -> dict[str, str]:
    """A column mapping (canonical field -> the user's column name, e.g. {"question": "query"}), checked: every key a
    localragas field (FIELD_ALIASES), every value a column name."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise ConfigError(f"columns must map a field to a column name, e.g. {{'question': 'query'}}, "
                          f"got {type_name(columns)}")
    out: dict[str, str] = {}
    for field, column in columns.items():
        if field not in FIELD_ALIASES:
            canonical = next((c for c, names in FIELD_ALIASES.items() if field in names), None)
            hint = (f"'{field}' is read as '{canonical}' already; map '{canonical}' to a column" if canonical else
                    f"fields: {', '.join(FIELD_ALIASES)}")
            raise ConfigError(f"columns: unknown field '{field}': {hint}")
        if not isinstance(column, str) or not column.strip():
            raise ConfigError(f"columns: the column for '{field}' must be a column name, got {column!r}")
        out[field] = column.strip()
    return out


def list_columns(columns: Mapping[str, str] | None, fields: Iterable[str]) -> set[str]:
    """The columns whose cells hold lists for these fields (by their names, or their mapped column)."""
    columns = columns or {}
    names: set[str] = set()
    for field in fields:
        names |= {columns[field]} if field in columns else {field, *FIELD_ALIASES[field]} - set(columns.values())
    return names


def unused_columns(columns: Mapping[str, str], seen: Iterable[str], shown: str, found: Iterable[str]) -> None:
    """Refuse a mapping that names a column the data does not have (a typo must not leave a field unread)."""
    seen = set(seen)
    missing = [(f, c) for f, c in columns.items() if c not in seen]
    if missing:
        field, column = missing[0]
        names = [str(k) for k in found]
        listed = ", ".join(names[:30]) + (", ..." if len(names) > 30 else "")
        raise DatasetError(shown, None, None,
                           f"columns maps '{field}' to '{column}', which is not a column (the columns: {listed})")


class ColumnCheck:
    """The mapping followed over the records of one input. A table's column names (`known`) are checked at once;
    otherwise the first record must have the required fields' columns (a wrong mapping, said with the columns there
    are, not a missing field of that row), and every mapped column must be in some record (`done`, at the end)."""

    def __init__(self, columns: Mapping[str, str], shown: str, known: Iterable[str] | None = None):
        self.columns, self.shown = columns, shown
        self.seen: set[str] = set()  # the mapped columns some record has
        self.keys: list[str] = []  # the first record's keys, to name in an error
        self.known = None if known is None else list(known)
        if self.known is not None:
            unused_columns(columns, self.known, shown, self.known)

    def see(self, record: Any) -> None:
        if not self.columns or self.known is not None or not isinstance(record, Mapping):
            return
        if not self.keys:
            required = {f: c for f, c in self.columns.items() if f in REQUIRED_FIELDS}
            unused_columns(required, record, self.shown, record)
        self.seen.update(c for c in self.columns.values() if c in record)
        self.keys = self.keys or list(record)

    def done(self) -> None:
        if self.known is None:
            unused_columns(self.columns, self.seen, self.shown, self.keys)

    def over(self, records: Iterable[Any]) -> None:
        """Every record seen, then done: for a reader that has them all before validating any."""
        for record in records:
            self.see(record)
        self.done()
