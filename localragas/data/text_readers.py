"""The records of a text file: JSON Lines (read a line at a time), JSON (a list, or an object with a `samples`
list) and CSV (list cells as JSON or Python list literals), each with the line it starts on; a row that cannot be
parsed is given as its DatasetError, for load_samples(skip_invalid=) to skip."""
from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .column_map import list_columns, type_name
from ..core.errors import DatasetError
from ..core.inputs import read_bounded, read_lines
from .sample_record import ID_FIELDS
from .schema import FALLBACK_ALIASES

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
Record = tuple[int | None, Any]  # (line, parsed object or a row-level DatasetError)
_BOM = b"\xef\xbb\xbf"


def _json_error(e: ValueError | RecursionError) -> str:
    """The reason json.loads refused a text: a syntax error, too deep a nesting, too long an integer."""
    if isinstance(e, json.JSONDecodeError):
        return f"invalid JSON: {e.msg} (column {e.colno})"
    if isinstance(e, RecursionError):
        return "invalid JSON: nested too deeply"
    return f"invalid JSON: {str(e).split(':')[0]}"


def file_error(shown: str):
    """How the input readers (localragas.core.inputs) raise a file-level DatasetError for `shown`."""
    return lambda message: DatasetError(shown, None, None, message)


def _utf8_error(shown: str, line: int, offset: int) -> DatasetError:
    return DatasetError(shown, line, None, f"invalid UTF-8 at byte offset {offset}; the file must be UTF-8 encoded")


def read_text(path: Path, shown: str, limit: int) -> str:
    raw = read_bounded(path, limit, file_error(shown))
    bom = 3 if raw.startswith(_BOM) else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        offset = bom + e.start
        raise _utf8_error(shown, raw[:offset].count(b"\n") + 1, offset) from None


def jsonl_records(path: Path, shown: str, limit: int) -> Iterator[Record]:
    return ((lineno, record) for lineno, _, record in jsonl_rows(path, shown, limit))


def jsonl_rows(path: Path, shown: str, limit: int) -> Iterator[tuple[int, int, Any]]:
    """(line, byte offset of its text, record) of each non-blank line: the offset reads the row back
    (data/lazy_samples.py)."""
    offset = 0  # of the line in the file
    for lineno, raw in enumerate(read_lines(path, limit, file_error(shown)), 1):
        bom = 3 if lineno == 1 and raw.startswith(_BOM) else 0
        try:
            text = raw[bom:].decode("utf-8")
        except UnicodeDecodeError as e:
            raise _utf8_error(shown, lineno, offset + bom + e.start) from None
        start, offset = offset + bom, offset + len(raw) + 1
        if not text.strip():
            continue
        try:
            yield lineno, start, json.loads(text)
        except (ValueError, RecursionError) as e:  # syntax, nesting depth, integers over 4300 digits
            yield lineno, start, DatasetError(shown, lineno, None, _json_error(e))


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _members(text: str, i: int) -> Iterator[tuple[Any, int]]:
    """(key or None, value offset) of each member of the valid JSON array or object starting at text[i]."""
    is_object, i = text[i] == "{", _skip_ws(text, i + 1)
    while text[i] not in "]}":
        key = None
        if is_object:
            key, i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past ':'
        yield key, i
        i = _skip_ws(text, _DECODER.raw_decode(text, i)[1])
        if text[i] == ",":
            i = _skip_ws(text, i + 1)


def json_records(text: str, path: str) -> Iterator[Record]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(path, e.lineno, None, _json_error(e)) from None
    except (ValueError, RecursionError) as e:
        raise DatasetError(path, None, None, _json_error(e)) from None
    start = _skip_ws(text, 0)
    if isinstance(doc, dict) and isinstance(doc.get("samples"), list):
        items = doc["samples"]
        start = [at for key, at in _members(text, start) if key == "samples"][-1]  # json.loads keeps the last
    elif isinstance(doc, list):
        items = doc
    else:
        raise DatasetError(path, None, None, "expected a list of objects or an object with a 'samples' list")
    for item, (_, at) in zip(items, _members(text, start)):
        yield text.count("\n", 0, at) + 1, item


def _python_list(cell: str) -> list[Any] | None:
    """A Python list literal ("['a', 'b']": how pandas, and so ragas's EvaluationDataset.to_csv, writes a list)."""
    if not cell.lstrip().startswith("["):
        return None
    try:
        value = ast.literal_eval(cell.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, list) else None


def _list_hint(cell: str) -> str:
    """How to write a plain-text cell as a list: the cell's own text as a JSON list, and quoted as a CSV cell."""
    text = cell.strip()
    text = text if len(text) <= 40 else text[:37] + "..."
    as_json = json.dumps([text], ensure_ascii=False)
    quoted = '"' + as_json.replace('"', '""') + '"'
    return (f"; write the cell as a JSON list, e.g. {as_json} (in the CSV file: {quoted}); "
            'several: ["first", "second"]')


def list_cell(cell: str, path: str, line: int, name: str) -> list[Any]:
    """A cell holding a list (contexts, ids) as text: JSON, or a Python list literal (pandas); a blank cell is []. A
    cell of plain text is refused with how to write it as a list."""
    try:
        value = json.loads(cell) if cell.strip() else []
    except json.JSONDecodeError as e:
        value = _python_list(cell)
        if value is None:
            plain = not cell.lstrip().startswith(("[", "{", '"'))
            message = ("expected a JSON list of strings, got plain text" + _list_hint(cell) if plain
                       else f"expected a JSON list of strings, got invalid JSON: {e.msg}")
            raise DatasetError(path, line, name, message) from None
    if not isinstance(value, list):
        hint = _list_hint(str(value)) if isinstance(value, (str, int, float)) else ""
        raise DatasetError(path, line, name, f"expected a JSON list of strings, got {type_name(value)}{hint}")
    return value


def _csv_rows(reader: Any, path: str) -> Iterator[list[str]]:
    """The reader's rows; a cell over csv's 128 KiB default limit is allowed (200 long chunks in one cell)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, 1 << 30))
    try:
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                raise DatasetError(path, reader.line_num or None, None, f"invalid CSV: {e}") from None
            yield row
    finally:
        csv.field_size_limit(limit)


def csv_records(text: str, path: str, columns: Mapping[str, str] | None = None) -> Iterator[Record]:
    reader = csv.reader(io.StringIO(text, newline=""))
    context_columns, id_columns = list_columns(columns, ["contexts"]), list_columns(columns, ID_FIELDS)
    header: list[str] | None = None
    end = 0
    for row in _csv_rows(reader, path):
        line, end = end + 1, reader.line_num  # a record starts on the line after the previous one ended
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [h.strip() for h in row]
            dupes = sorted({h for h in header if header.count(h) > 1})
            if dupes:
                raise DatasetError(path, line, dupes[0], "duplicate column in header")
            continue
        try:
            if len(row) != len(header):
                raise DatasetError(path, line, None, f"expected {len(header)} cells, got {len(row)}")
            record: dict[str, Any] = dict(zip(header, row))
            for name in id_columns & record.keys():
                if not record[name].strip():
                    del record[name]  # a blank cell: no ids
            for name in (context_columns | id_columns) & record.keys():
                if name in FALLBACK_ALIASES and not record[name].lstrip().startswith("["):
                    continue  # `context` as text: one chunk
                record[name] = list_cell(record[name], path, line, name)
            yield line, record
        except DatasetError as err:
            yield line, err
