"""Samples from what a Python user has at hand: localragas.evaluate() and the pytest plugin's `evaluate` fixture
take any of these, through as_samples(); localragas.calibrate() reads labelled rows through python_records().

- a list (any iterable) of Samples, dicts, or objects with model_dump() / to_dict() / dataclass fields (ragas's
  SingleTurnSample, deepeval's LLMTestCase)
- a pandas DataFrame (duck-typed: `columns` and `to_dict`)
- a Hugging Face datasets.Dataset (duck-typed: `column_names`, iterating rows as dicts)
- a ragas EvaluationDataset (duck-typed: `samples`, with `to_list()`)
- a path (str or pathlib.Path) to a file or folder load_samples reads (OpenTelemetry / OpenInference span files too)
- what a LangChain chain or a LlamaIndex query engine returned (data/framework_outputs.py): a chain's output dict
  with its Documents (`context` / `source_documents`) and `answer` / `result`; {"question": q, "answer": Response}
- conversations (data/conversations.py, data/conversation_shapes.py): rows in the chat format, ragas
  MultiTurnSamples (an EvaluationDataset of them too), deepeval ConversationalTestCases, LangChain / LlamaIndex chat
  histories (a row {"messages": [...]}, or the list of messages itself as a row; a list holding only messages is
  one conversation)

Field names are those files accept (schema.FIELD_ALIASES: localragas's, ragas's, deepeval's, promptfoo-style);
`columns` maps a field to any other column name. Each record is checked as a file row is
(sample_record.sample_from_dict), so errors read "DataFrame, row 3, field 'contexts': expected a list of strings, got
str", rows numbered from 1. What pandas and Arrow produce is taken as plain Python: arrays as lists, NaN / None /
pd.NA as an absent field, and a contexts cell holding a list as text ("['a', 'b']", as pandas.read_csv gives a ragas CSV) as that list.

A sample without an id is named by its question (sample_record.content_id: "q-" and 10 hex digits; "-2" after the second
with the same question), as a file row is: the same data from a file, a DataFrame or a list gives the same ids, and
the ids stay when answers and contexts change or rows move, so `compare` and `--resume` pair them.
"""
from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .column_map import ColumnCheck, check_columns, list_columns, type_name
from .conversation_shapes import is_chat_history
from .conversations import MESSAGES, conversation_samples, is_conversation
from .dataset import load_samples
from ..core.errors import DatasetError
from .field_check import FieldCheck, SampleList
from .lazy_samples import LazySamples
from .framework_outputs import framework_record, is_framework_record, is_response
from .sample_record import ID_FIELDS, SampleIds, sample_from_dict
from .schema import Sample, field_names
from .table_readers import plain
from .text_readers import list_cell


def as_samples(data: Any, columns: Mapping[str, str] | None = None) -> Sequence[Sample]:
    """Samples from any input evaluate() takes (see the module docstring): a SampleList, whose `ignored` lists the
    names no field reads. Raises DatasetError (a ValueError) naming the row and field of a bad record or a near-miss
    name ("refrence" without a reference: a table's column, once), and for an input with no sample; ConfigError for
    a bad `columns` mapping. A SampleList or LazySamples (load_samples's, a shard of one) is returned as it is."""
    columns = check_columns(columns)
    if isinstance(data, (SampleList, LazySamples)):
        return data
    if isinstance(data, (str, os.PathLike)):
        return load_samples(Path(data), columns=columns)[0]
    fields = FieldCheck(columns)
    source, rows = python_records(data, columns, fields=fields)
    samples: list[Sample] = []
    ids = SampleIds(source, unit="row")
    with numbered_rows():
        for row, item in rows:
            if is_conversation(item):
                samples.extend(ids.claim(t, row) for t in conversation_samples(item, path=source, line=row))
                continue
            if not isinstance(item, Sample):
                item = sample_from_dict(item, path=source, line=row, columns=columns)
            samples.append(ids.claim(item, row))
    if not samples:  # as a file with no sample is refused: an empty input must not pass the gate
        raise DatasetError(source, None, None, "no samples: the input is empty, and nothing would be evaluated")
    return SampleList(samples, fields.ignored, source)


def python_records(data: Any, columns: Mapping[str, str], samples: bool = True,
                   fields: FieldCheck | None = None) -> tuple[str, Iterator[tuple[int, Any]]]:
    """(what to call `data` in errors, its rows numbered from 1): each a plain record (a dict, missing values left
    out, arrays as lists; a table's list cells given as text parsed) or, with `samples`, a Sample as it was given.
    The readers of rows given in Python (as_samples, localragas.quality.calibration's labelled rows) build their
    samples from these with sample_from_dict, inside numbered_rows(). columns: checked (check_columns); a mapped
    column the data lacks is an error (for a table before any row, else at the end). fields: the names no field
    reads are followed (a table's columns checked before any row, else each record's)."""
    source, known, records = _records(data)
    mapped = ColumnCheck(columns, source, known)
    if fields is not None and known is not None:
        fields.table(known, source)

    def rows() -> Iterator[tuple[int, Any]]:
        for row, item in enumerate(records, 1):
            if isinstance(item, Sample) and samples:
                yield row, item
                continue
            record = _plain_record(_record_of(item, source, row), columns)
            if known is not None:  # a table's list cells may be text (pandas.read_csv)
                _parse_list_cells(record, columns, source, row)
            if not is_conversation(record):  # a conversation's messages are checked by its reader
                mapped.see(record)
                if fields is not None and known is None:
                    fields.row(record, source, row, unit="row")
            yield row, record
        mapped.done()

    return source, rows()


@contextmanager
def numbered_rows() -> Iterator[None]:
    """A DatasetError about a line of data given in Python names it a row ("DataFrame, row 3, field ..."), as the
    rows are counted from 1 in the order given."""
    try:
        yield
    except DatasetError as e:
        if e.unit == "row" or e.line is None:
            raise
        raise DatasetError(e.path, e.line, e.field, e.detail, unit="row") from None


def _records(data: Any) -> tuple[str, list[str] | None, Iterable[Any]]:
    """(what to call the input in errors, its column names if it is a table, its records)."""
    if isinstance(data, Sample) or isinstance(data, Mapping) and not _is_dataset_dict(data):
        raise DatasetError("samples", None, None,
                           f"expected a list of samples, got one {type(data).__name__}: wrap it in a list, [sample]")
    if _is_dataset_dict(data):
        if len(data) != 1:
            raise DatasetError("DatasetDict", None, None, f"the dataset has {len(data)} splits ({', '.join(data)}); "
                               "pass the one to evaluate, e.g. ds['test']")
        data = next(iter(data.values()))
    if _is_frame(data):
        names = [str(c) for c in data.columns]
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise DatasetError("DataFrame", None, dupes[0], "duplicate column")
        return "DataFrame", names, data.to_dict("records")
    if hasattr(data, "column_names") and hasattr(data, "__iter__") and not isinstance(data, (list, tuple)):
        return "Dataset", [str(c) for c in data.column_names], data
    if hasattr(data, "samples") and (callable(getattr(data, "to_list", None)) or
                                     callable(getattr(data, "to_pandas", None))):
        to_list = getattr(data, "to_list", None)
        return "EvaluationDataset", None, to_list() if callable(to_list) else data.samples
    if is_chat_history(data):  # one conversation's messages (a LangChain memory's, a LlamaIndex chat history)
        return "samples", None, [{MESSAGES: list(data)}]
    if isinstance(data, (bytes, bytearray)) or not isinstance(data, Iterable):
        raise DatasetError("samples", None, None, "expected a list of samples (Sample objects or dicts), a pandas "
                           "DataFrame, a datasets.Dataset, a ragas EvaluationDataset or a file path, got "
                           f"{type(data).__name__}")
    return "samples", None, data


def _is_frame(data: Any) -> bool:
    return hasattr(data, "columns") and callable(getattr(data, "to_dict", None)) and hasattr(data, "iloc")


def _is_dataset_dict(data: Any) -> bool:
    """A datasets.DatasetDict: a mapping of split name -> Dataset."""
    return (isinstance(data, Mapping) and bool(data)
            and all(hasattr(v, "column_names") and not isinstance(v, Mapping) for v in data.values()))


def _record_of(item: Any, source: str, row: int) -> Any:
    """A record (a mapping) from a dict, a pydantic model, an object with to_dict(), or a dataclass."""
    if isinstance(item, Mapping):
        return framework_record(item) if is_framework_record(item) else item
    if is_chat_history(item):  # a conversation given as its list of messages
        return {MESSAGES: list(item)}
    if is_response(item):
        raise DatasetError(source, row, None, "a LlamaIndex Response holds no question: give {'question': q, "
                           "'answer': response}, or collect them with localragas.integrations.llamaindex.collect",
                           unit="row")
    if callable(getattr(item, "model_dump", None)):  # ragas SingleTurnSample, deepeval LLMTestCase (pydantic)
        return item.model_dump()
    if callable(getattr(item, "to_dict", None)) and not isinstance(item, type):
        return item.to_dict()
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return dataclasses.asdict(item)
    raise DatasetError(source, row, None, f"expected a Sample or a dict, got {type_name(item)}", unit="row")


def _absent(value: Any) -> bool:
    """None, NaN, or pandas's NA / NaT: a missing value."""
    return (value is None or isinstance(value, float) and math.isnan(value)
            or type(value).__name__ in ("NAType", "NaTType"))


def _plain_record(record: Any, columns: Mapping[str, str]) -> Any:
    """The record without its missing values (None, NaN: an absent field, so `id` and a NaN `sample_id` of a
    DataFrame do not disagree), arrays as lists, and an id pandas made a float (a column with a gap) as an int."""
    if not isinstance(record, Mapping):
        return record
    out = {k: plain(v) for k, v in record.items() if not _absent(v)}
    for name in field_names(out, "id", columns):
        if isinstance(out[name], float) and out[name].is_integer():
            out[name] = int(out[name])
    return out


def _parse_list_cells(record: dict[str, Any], columns: Mapping[str, str], source: str, row: int) -> None:
    """A contexts or ids cell holding a list as text ("['a', 'b']", JSON) becomes that list, as in a CSV file."""
    for name in list_columns(columns, ["contexts", *sorted(ID_FIELDS)]):
        value = record.get(name)
        if isinstance(value, str) and value.lstrip().startswith("["):
            record[name] = list_cell(value, source, row, name)
