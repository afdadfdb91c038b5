from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..errors import LocalragasError
from ..inputs import DEFAULT_MAX_INPUT_BYTES, failing, read_input
from ..schema import Report
from .atomic import write_atomic

REPORT_LIMIT_HINT = "raise the limit with --max-input-bytes (max_input_bytes in the Python API)"


def write_json(report: Report, path: str | Path) -> None:
    write_atomic(path, report.model_dump_json(indent=2) + "\n")


def read_json(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> Report:
    """A JSON report; one written with --ragas-names comes back under localragas's metric names.

    A path that is not a regular file (a FIFO, a device, also through a symlink) or a file over max_input_bytes is
    refused before it is opened (localragas.inputs), as a dataset is."""
    from ..ragas_compat import from_ragas_names  # noqa: PLC0415

    raw = read_input(Path(path), max_input_bytes, failing(path), REPORT_LIMIT_HINT)
    try:
        return from_ragas_names(Report.model_validate_json(raw))
    except ValidationError as e:
        raise LocalragasError(f"{path}: not a localragas JSON report: {e}") from None
