from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Iterable, Iterator

from pydantic import ValidationError

from ..core.errors import LocalragasError
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES, failing, read_input
from ..data.conversation_summary import conversation_summaries, has_conversations
from ..data.schema import Report
from ..core.atomic_write import write_atomic

REPORT_LIMIT_HINT = "raise the limit with --max-input-bytes (max_input_bytes in the Python API)"


def json_pieces(report: Report, indent: int | None = 2) -> Iterator[str]:
    """The text of report.model_dump_json(indent=indent), one sample at a time: a large report is never one string
    in memory. The samples go where the report without them has its empty list: the last such key, as only
    `skipped` (rows of fixed fields) comes after them; a string cannot hold it unescaped. A report whose results hold
    conversations has its `conversations` block after them (data/conversation_summary.py: one row a conversation,
    from a second pass over the results), which a report read back ignores: it is computed from the turns again."""
    pretty = indent is not None
    head = report.model_copy(update={"samples": []}).model_dump_json(indent=indent)
    empty = '"samples": []' if pretty else '"samples":[]'
    cut = head.rindex(empty) + len(empty) - 1  # at its "]"
    if not report.samples:
        yield head
        return
    yield head[:cut]
    yield from _items((s.model_dump_json(indent=indent) for s in report.samples), indent)
    close = "\n" + " " * indent if indent is not None else ""
    if has_conversations(report):
        yield close + "]," + (f"{close}\"conversations\": [" if pretty else '"conversations":[')
        yield from _items((c.model_dump_json(indent=indent) for c in conversation_summaries(report)), indent)
    yield close + head[cut:]


def _items(texts: Iterable[str], indent: int | None) -> Iterator[str]:
    """The items of an array two levels down, comma-separated, each indented as the report's."""
    pad = "\n" + " " * (2 * indent) if indent is not None else ""
    for i, text in enumerate(texts):
        yield ("," if i else "") + (pad + text.replace("\n", pad) if indent is not None else text)


def write_json(report: Report, path: str | Path) -> None:
    write_atomic(path, chain(json_pieces(report), ["\n"]))


def read_json(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> Report:
    """A JSON report; one written with --ragas-names comes back under localragas's metric names, and one written
    before reports stored their metrics' definitions gets the registry's (metrics.definitions_of).

    A path that is not a regular file (a FIFO, a device, also through a symlink) or a file over max_input_bytes is
    refused before it is opened (localragas.core.inputs), as a dataset is."""
    from ..metrics.report_definitions import definitions_of  # noqa: PLC0415
    from ..data.ragas_compat import from_ragas_names  # noqa: PLC0415

    raw = read_input(Path(path), max_input_bytes, failing(path), REPORT_LIMIT_HINT)
    try:
        report = from_ragas_names(Report.model_validate_json(raw))
    except ValidationError as e:
        raise LocalragasError(f"{path}: not a localragas JSON report: {e}") from None
    return report.model_copy(update={"definitions": definitions_of(report)})
