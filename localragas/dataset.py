"""Load evaluation samples from JSON Lines, JSON or CSV files, with errors that name file, line and field.

An input that is not a regular file (a FIFO would block, a device never ends) or is larger than max_input_bytes is
refused before it is opened (localragas.inputs, the rule for every file a user names); JSON Lines are read one line
at a time.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from localragas.errors import ConfigError, DatasetError
from localragas.inputs import DEFAULT_MAX_INPUT_BYTES, check_input, check_max_input_bytes, read_bounded, read_lines
from localragas.schema import FALLBACK_ALIASES, FIELD_ALIASES, Sample, SkippedRow, field_names

# FIELD_ALIASES (canonical field -> the ragas, deepeval and promptfoo-style names also read) lives in schema.py,
# the one table Sample(...) uses too.
KNOWN_FIELDS: frozenset[str] = frozenset(n for c, a in FIELD_ALIASES.items() for n in (c, *a))
CONTEXT_FIELDS: frozenset[str] = frozenset(("contexts", *FIELD_ALIASES["contexts"]))
ID_FIELDS: frozenset[str] = frozenset(("retrieved_context_ids", "reference_context_ids"))
FORMATS: dict[str, str] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_Record = tuple[int | None, Any]  # (line, parsed object or a row-level DatasetError)
_BOM = b"\xef\xbb\xbf"


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_text(value: str, path: str, line: int | None, field: str) -> None:
    """Refuse a lone surrogate (JSON allows the escape "\\ud800"): it cannot be written as UTF-8 to any report."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        message = (f"invalid Unicode: lone surrogate \\u{ord(value[e.start]):04x} at character {e.start}; "
                   "text must be valid UTF-8")
        raise DatasetError(path, line, field, message) from None


def _json_error(e: ValueError | RecursionError) -> str:
    """The reason json.loads refused a text: a syntax error, too deep a nesting, too long an integer."""
    if isinstance(e, json.JSONDecodeError):
        return f"invalid JSON: {e.msg} (column {e.colno})"
    if isinstance(e, RecursionError):
        return "invalid JSON: nested too deeply"
    return f"invalid JSON: {str(e).split(':')[0]}"


def _get(d: Mapping[str, Any], canonical: str, path: str, line: int | None,
         kinds: tuple[type, ...], what: str, *, required: bool,
         columns: Mapping[str, str] | None = None) -> tuple[str, Any]:
    """(name used, value) of a field given by its canonical name, an alias, or its column in `columns`; checks its
    type.

    An absent or null optional field gives None; aliases given together must agree. A `context` (FALLBACK_ALIASES)
    string is one chunk.
    """
    names = field_names(d, canonical, columns)
    for other in names[1:]:
        if d[other] != d[names[0]]:
            message = f"'{names[0]}' and '{other}' are both given, with different values"
            raise DatasetError(path, line, names[0], message)
    if not names and required:
        if columns and canonical in columns:
            raise DatasetError(path, line, columns[canonical], f"missing required field (mapped to '{canonical}')")
        raise DatasetError(path, line, canonical, "missing required field")
    value = d[names[0]] if names else None
    if names and names[0] in FALLBACK_ALIASES and isinstance(value, str):
        _check_text(value, path, line, names[0])
        value = [value]
    if value is None and not required:
        return canonical, None
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise DatasetError(path, line, names[0], f"expected {what}, got {_type_name(value)}")
    if isinstance(value, str):
        _check_text(value, path, line, names[0])
    return names[0], value


# Set by `localragas run-rag` on a row whose pipeline call failed (localragas.rag_run): such a row is refused.
RAG_ERROR_FIELD = "rag_error"


def _blank_to_none(value: str | None) -> str | None:
    return value if value and value.strip() else None


def content_id(question: str) -> str:
    """The id of a sample given without one: "q-" and 10 hex digits of the sha256 of its question (whitespace runs as
    one space). A test set's questions stay when the RAG system's answers and contexts change, and when rows are
    added, removed or reordered, so `compare` and `--resume` still pair the samples of two runs."""
    return "q-" + hashlib.sha256(" ".join(question.split()).encode("utf-8")).hexdigest()[:10]


class SampleIds:
    """The ids of one input's samples. A given id must be unique (DatasetError naming where it was first used); a
    sample without one is named by its question (content_id), and a second sample with the same question gets
    "-2" after it, a third "-3", in the order they come."""

    def __init__(self, source: str, unit: str = "line"):
        self.source, self.unit = source, unit
        self.first_seen: dict[str, int | None] = {}

    def claim(self, sample: Sample, line: int | None) -> Sample:
        """The sample with its id (named here when it has none), once the id is known to be unique."""
        if sample.id is None:
            base, k = content_id(sample.question), 1
            while (sid := base if k == 1 else f"{base}-{k}") in self.first_seen:
                k += 1
            sample = sample.model_copy(update={"id": sid})
        if sample.id in self.first_seen:
            raise DatasetError(self.source, line, "id", f"duplicate id '{sample.id}' (first used on {self.unit} "
                                                        f"{self.first_seen[sample.id]})")
        self.first_seen[sample.id] = line
        return sample


def sample_from_dict(
    d: Any, *, path: str = "<memory>", line: int | None = None, default_id: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> Sample:
    """Validate one record (canonical, ragas, deepeval or promptfoo-style field names, FIELD_ALIASES) and build a
    Sample; raise DatasetError if invalid.

    Without an id, the id is default_id, else None: the reader names it (SampleIds.claim). columns: canonical
    field -> the record's key holding it
    (check_columns), read instead of the field's own names.
    """
    if not isinstance(d, Mapping):
        raise DatasetError(path, line, None, f"expected an object, got {_type_name(d)}")
    kw = {"columns": columns}
    failure = d.get(RAG_ERROR_FIELD)
    if failure is not None:
        raise DatasetError(path, line, RAG_ERROR_FIELD, f"the RAG pipeline failed on this row in run-rag "
                                                        f"({str(failure)[:300]}), so it has nothing to score: run "
                                                        "run-rag again, or give --skip-invalid to count it skipped")
    name, question = _get(d, "question", path, line, (str,), "a string", required=True, **kw)
    if not question.strip():
        raise DatasetError(path, line, name, "must not be empty")
    name, contexts = _get(d, "contexts", path, line, (list,), "a list of strings", required=True, **kw)
    for i, c in enumerate(contexts):
        if not isinstance(c, str):
            raise DatasetError(path, line, f"{name}[{i}]", f"expected a string, got {_type_name(c)}")
        _check_text(c, path, line, f"{name}[{i}]")
    _, answer = _get(d, "answer", path, line, (str,), "a string", required=True, **kw)
    _, reference = _get(d, "reference", path, line, (str,), "a string", required=False, **kw)
    _, category = _get(d, "category", path, line, (str,), "a string", required=False, **kw)
    _, raw_id = _get(d, "id", path, line, (str, int), "a string or integer", required=False, **kw)
    sid = (str(raw_id).strip() if raw_id is not None else "") or default_id or None  # SampleIds names it
    ids = {}
    for field in sorted(ID_FIELDS):
        name, value = _get(d, field, path, line, (list,), "a list of ids (strings or integers)", required=False,
                           **kw)
        for i, x in enumerate(value or []):
            if not isinstance(x, (str, int)) or isinstance(x, bool):
                raise DatasetError(path, line, f"{name}[{i}]", f"expected a string or integer, got {_type_name(x)}")
            if isinstance(x, str):
                _check_text(x, path, line, f"{name}[{i}]")
        ids[field] = value
    name, language = _get(d, "language", path, line, (str,), "a string", required=False, **kw)
    if language is not None and language.strip().lower() not in ("", "en", "zh"):
        raise DatasetError(path, line, name, f"expected 'en' or 'zh', got {language!r}")
    return Sample(id=sid, question=question, contexts=list(contexts), answer=answer,
                  reference=_blank_to_none(reference), category=_blank_to_none(category), **ids,
                  language=_blank_to_none(language))


def _fail(shown: str):
    """How the input readers (localragas.inputs) raise a file-level DatasetError for `shown`."""
    return lambda message: DatasetError(shown, None, None, message)


def _utf8_error(shown: str, line: int, offset: int) -> DatasetError:
    return DatasetError(shown, line, None, f"invalid UTF-8 at byte offset {offset}; the file must be UTF-8 encoded")


def _read_text(path: Path, shown: str, limit: int) -> str:
    raw = read_bounded(path, limit, _fail(shown))
    bom = 3 if raw.startswith(_BOM) else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        offset = bom + e.start
        raise _utf8_error(shown, raw[:offset].count(b"\n") + 1, offset) from None


def _jsonl_records(path: Path, shown: str, limit: int) -> Iterator[_Record]:
    offset = 0  # of the line in the file, for an encoding error
    for lineno, raw in enumerate(read_lines(path, limit, _fail(shown)), 1):
        bom = 3 if lineno == 1 and raw.startswith(_BOM) else 0
        try:
            text = raw[bom:].decode("utf-8")
        except UnicodeDecodeError as e:
            raise _utf8_error(shown, lineno, offset + bom + e.start) from None
        offset += len(raw) + 1
        if not text.strip():
            continue
        try:
            yield lineno, json.loads(text)
        except (ValueError, RecursionError) as e:  # syntax, nesting depth, integers over 4300 digits
            yield lineno, DatasetError(shown, lineno, None, _json_error(e))


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


def _json_records(text: str, path: str) -> Iterator[_Record]:
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


def _csv_contexts(cell: str, path: str, line: int, name: str) -> list[Any]:
    try:
        value = json.loads(cell) if cell.strip() else []
    except json.JSONDecodeError as e:
        value = _python_list(cell)
        if value is None:
            message = f"expected a JSON list of strings, got invalid JSON: {e.msg}"
            raise DatasetError(path, line, name, message) from None
    if not isinstance(value, list):
        raise DatasetError(path, line, name, f"expected a JSON list of strings, got {_type_name(value)}")
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


def _list_columns(columns: Mapping[str, str] | None, fields: Iterable[str]) -> set[str]:
    """The CSV columns whose cells hold JSON lists for these fields (by their names, or their mapped column)."""
    columns = columns or {}
    names: set[str] = set()
    for field in fields:
        names |= {columns[field]} if field in columns else {field, *FIELD_ALIASES[field]} - set(columns.values())
    return names


def _csv_records(text: str, path: str, columns: Mapping[str, str] | None = None) -> Iterator[_Record]:
    reader = csv.reader(io.StringIO(text, newline=""))
    context_columns, id_columns = _list_columns(columns, ["contexts"]), _list_columns(columns, ID_FIELDS)
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
                record[name] = _csv_contexts(record[name], path, line, name)
            yield line, record
        except DatasetError as err:
            yield line, err


def _records(p: Path, shown: str, limit: int, columns: Mapping[str, str] | None = None) -> Iterator[_Record]:
    """The records of a text file (by extension), a Parquet file, or a Hugging Face `save_to_disk` folder."""
    from .ragas_compat import hf_dataset_records, parquet_records  # noqa: PLC0415

    check_input(p, check_max_input_bytes(limit), _fail(shown), folder_ok=True)
    if p.is_dir():
        return hf_dataset_records(p, shown)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        supported = ", ".join(FORMATS)
        message = f"unsupported file extension '{p.suffix}'; supported: {supported}, or a datasets folder"
        raise DatasetError(shown, None, None, message)
    if fmt == "parquet":
        return parquet_records(p, shown)
    if fmt == "jsonl":
        return _jsonl_records(p, shown, limit)
    if fmt == "csv":
        return _csv_records(_read_text(p, shown, limit), shown, columns)
    return _json_records(_read_text(p, shown, limit), shown)


def check_columns(columns: Any) -> dict[str, str]:
    """A column mapping (canonical field -> the user's column name, e.g. {"question": "query"}), checked: every key a
    localragas field (FIELD_ALIASES), every value a column name."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise ConfigError(f"columns must map a field to a column name, e.g. {{'question': 'query'}}, "
                          f"got {_type_name(columns)}")
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


REQUIRED_FIELDS = ("question", "contexts", "answer")


def check_first_record(columns: Mapping[str, str], record: Any, shown: str) -> None:
    """A required field mapped to a column the first record lacks: the mapping is wrong (say so, with the columns
    there are), not only that row."""
    if isinstance(record, Mapping):
        unused_columns({f: c for f, c in columns.items() if f in REQUIRED_FIELDS}, record, shown, record)


def load_samples(path: str | Path, *, skip_invalid: bool = False,
                 max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                 columns: Mapping[str, str] | None = None) -> tuple[list[Sample], list[SkippedRow]]:
    """Load samples from a .jsonl/.ndjson, .json, .csv or .parquet file, or a datasets save_to_disk folder.

    With skip_invalid, bad rows are returned as SkippedRow instead of raised; file-level errors always raise.
    A path that is not a regular file or folder (a FIFO, a device), or a file over max_input_bytes, is refused.
    columns: canonical field -> the file's column holding it (e.g. {"question": "query"}); a mapped column that no
    row has is an error.
    """
    shown, p = str(path), Path(path)
    columns = check_columns(columns)
    records = _records(p, shown, max_input_bytes, columns)
    samples: list[Sample] = []
    skipped: list[SkippedRow] = []
    ids = SampleIds(shown)
    seen: set[str] = set()  # the mapped columns some row has
    keys: list[str] = []  # the first row's keys, to name in an error
    for row, (line, record) in enumerate(records, 1):
        try:
            if isinstance(record, DatasetError):
                raise record
            if columns and isinstance(record, Mapping):
                if not keys:
                    check_first_record(columns, record, shown)
                seen.update(k for k in columns.values() if k in record)
                keys = keys or list(record)
            samples.append(ids.claim(sample_from_dict(record, path=shown, line=line, columns=columns), line))
        except DatasetError as e:
            if not skip_invalid:
                raise
            skipped.append(SkippedRow(path=e.path, line=e.line, field=e.field, reason=e.detail))
    if not samples:
        extra = f" ({len(skipped)} invalid rows skipped)" if skipped else ""
        raise DatasetError(shown, None, None, f"no samples{extra}")
    unused_columns(columns, seen, shown, keys)
    return samples, skipped


def read_records(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> list[tuple[int | None, Any]]:
    """Every record of a .jsonl/.ndjson, .json or .csv file with the line it starts on, parsed but not validated:
    for readers of fields beyond a sample's (`localragas calibrate` reads `label`, `pair`, `better`), which build
    each sample with sample_from_dict. A file or row that cannot be parsed raises DatasetError, as does a path
    load_samples refuses (not a regular file, over max_input_bytes)."""
    shown, p = str(path), Path(path)
    out: list[tuple[int | None, Any]] = []
    for line, record in _records(p, shown, max_input_bytes):
        if isinstance(record, DatasetError):
            raise record
        out.append((line, record))
    return out
