from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..errors import LocalragasError
from ..schema import Report
from .atomic import write_atomic


def write_json(report: Report, path: str | Path) -> None:
    write_atomic(path, report.model_dump_json(indent=2) + "\n")


def read_json(path: str | Path) -> Report:
    """A JSON report; one written with --ragas-names comes back under localragas's metric names."""
    from ..ragas_compat import from_ragas_names  # noqa: PLC0415

    try:
        return from_ragas_names(Report.model_validate_json(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValidationError) as e:
        raise LocalragasError(f"{path}: not a localragas JSON report: {e}") from None
