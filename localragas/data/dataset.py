"""Load evaluation samples from JSON Lines, JSON, CSV or Parquet files or a `datasets` folder, with errors that name
file, line and field.

An input that is not a regular file (a FIFO would block, a device never ends) or is larger than max_input_bytes is
refused before it is opened (localragas.core.inputs, the rule for every file a user names); JSON Lines are read one
line at a time. The readers by kind: data/text_readers.py (JSON Lines, JSON, CSV), data/table_readers.py (Parquet,
`datasets`), data/trace_readers.py (OpenTelemetry / OpenInference spans in a .json or .jsonl file, told by content:
one sample per trace); each record becomes a Sample in data/sample_record.py; a column mapping is followed by
data/column_map.py.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from .column_map import ColumnCheck, check_columns
from ..core.errors import DatasetError
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES, check_input, check_max_input_bytes
from . import lazy_samples
from .field_check import FieldCheck, SampleList
from .lazy_samples import RowIndex
from .conversations import conversation_samples, is_conversation
from .sample_record import SampleIds, sample_from_dict
from .schema import Sample, SkippedRow
from .table_readers import hf_dataset_records, parquet_records
from .trace_readers import looks_like_spans, trace_records
from .text_readers import Record, csv_records, file_error, json_records, jsonl_rows, read_text

FORMATS: dict[str, str] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
TABLES = ("csv", "parquet")  # every record has the same columns: checked once (and a `datasets` folder)


def _records(p: Path, shown: str, limit: int, columns: Mapping[str, str] | None = None) -> Iterator[Record]:
    """The records of a text file (by extension), a Parquet file, or a Hugging Face `save_to_disk` folder."""
    return ((line, record) for line, _, record in _rows(p, shown, limit, columns))


def _rows(p: Path, shown: str, limit: int,
          columns: Mapping[str, str] | None = None) -> Iterator[tuple[int | None, int | None, object]]:
    """(line, byte offset, record) of each record: the offset of a JSON Lines row (None for any other input)."""
    check_input(p, check_max_input_bytes(limit), file_error(shown), folder_ok=True)
    if p.is_dir():
        return _no_offset(hf_dataset_records(p, shown))
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        supported = ", ".join(FORMATS)
        message = f"unsupported file extension '{p.suffix}'; supported: {supported}, or a datasets folder"
        raise DatasetError(shown, None, None, message)
    if fmt == "parquet":
        return _no_offset(parquet_records(p, shown))
    if fmt in ("json", "jsonl") and looks_like_spans(p):
        return _no_offset(trace_records(p, shown, limit))
    if fmt == "jsonl":
        return jsonl_rows(p, shown, limit)
    if fmt == "csv":
        return _no_offset(csv_records(read_text(p, shown, limit), shown, columns))
    return _no_offset(json_records(read_text(p, shown, limit), shown))


def _no_offset(records: Iterator[Record]) -> Iterator[tuple[int | None, None, object]]:
    return ((line, None, record) for line, record in records)


def load_samples(path: str | Path, *, skip_invalid: bool = False,
                 max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                 columns: Mapping[str, str] | None = None) -> tuple[Sequence[Sample], list[SkippedRow]]:
    """Load samples from a .jsonl/.ndjson, .json, .csv or .parquet file, or a datasets save_to_disk folder; a .json or
    .jsonl file of OpenTelemetry spans (OTLP JSON, the SDK's span JSON) gives one sample per trace (trace_readers).

    With skip_invalid, bad rows are returned as SkippedRow instead of raised; file-level errors always raise.
    A path that is not a regular file or folder (a FIFO, a device), or a file over max_input_bytes, is refused.
    columns: canonical field -> the file's column holding it (e.g. {"question": "query"}); a mapped column that no
    row has is an error.
    A name no field reads that is a near miss of a field the row lacks ("refrence" without a reference) is an error
    naming the name it probably meant: a row's (skipped with skip_invalid), or for a table (CSV, Parquet, a folder)
    its column's, once, a file's. The samples are a SampleList: `ignored` lists the other names no field reads. Past
    SPILL_AFTER samples of a JSON Lines file, a LazySamples (data/lazy_samples.py): each read back from the file
    when used.
    """
    shown, p = str(path), Path(path)
    columns = check_columns(columns)
    records = _rows(p, shown, max_input_bytes, columns)
    table = p.is_dir() or FORMATS.get(p.suffix.lower()) in TABLES
    samples: list[Sample] | None = []  # None: past SPILL_AFTER of a JSON Lines file, whose rows `index` finds
    index = RowIndex(p, shown, columns)
    skipped: list[SkippedRow] = []
    ids = SampleIds(shown)
    mapped = ColumnCheck(columns, shown)
    fields, header = FieldCheck(columns), None
    chats = False  # a conversation was read: every sample stays in memory (a row is several samples)
    for line, offset, record in records:
        if table and header is None and isinstance(record, Mapping):
            header = list(record)
            fields.table(header, shown)  # one column: the file's error, never a row skipped for it
        try:
            if isinstance(record, DatasetError):
                raise record
            if isinstance(record, Mapping) and is_conversation(record):  # a conversation: its turns' samples, kept in memory
                if samples is None:
                    raise DatasetError(shown, line, "messages", f"a conversation after more than "
                                       f"{lazy_samples.SPILL_AFTER:,} single samples: give conversations in their "
                                       "own file")
                turns = [ids.claim(t, line) for t in conversation_samples(record, path=shown, line=line)]
                chats = True
            else:
                mapped.see(record)
                if not table:
                    fields.row(record, shown, line)
                given = sample_from_dict(record, path=shown, line=line, columns=columns)
                sample = ids.claim(given, line)
        except DatasetError as e:
            if not skip_invalid:
                raise
            skipped.append(SkippedRow(path=e.path, line=e.line, field=e.field, reason=e.detail))
            continue
        if is_conversation(record):
            assert samples is not None
            samples.extend(turns)
            continue
        if offset is not None and line is not None:
            index.add(offset, line, given.id, sample)
        if samples is not None:
            samples.append(sample)
            if offset is not None and len(samples) > lazy_samples.SPILL_AFTER and not chats:
                samples = None  # read back from the file as they are used
    if not (samples if samples is not None else len(index)):
        extra = f" ({len(skipped)} invalid rows skipped)" if skipped else ""
        raise DatasetError(shown, None, None, f"no samples{extra}")
    mapped.done()
    if samples is None:
        return lazy_samples.held(index, fields.ignored, shown), skipped
    return SampleList(samples, fields.ignored, shown), skipped


def read_records(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> list[Record]:
    """Every record of a .jsonl/.ndjson, .json or .csv file with the line it starts on, parsed but not validated:
    for readers of fields beyond a sample's (`localragas calibrate` reads `label`, `pair`, `better`), which build
    each sample with sample_from_dict. A file or row that cannot be parsed raises DatasetError, as does a path
    load_samples refuses (not a regular file, over max_input_bytes)."""
    shown, p = str(path), Path(path)
    out: list[Record] = []
    for line, record in _records(p, shown, max_input_bytes):
        if isinstance(record, DatasetError):
            raise record
        out.append((line, record))
    return out
