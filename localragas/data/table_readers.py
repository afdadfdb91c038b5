"""The records of a table file: a Parquet file (pyarrow) and a folder written by `datasets.Dataset.save_to_disk`
(ragas `EvaluationDataset.to_hf_dataset()`, through the `datasets` package), each row numbered from 1, its values
as plain Python."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import DatasetError, MissingDependencyError


def plain(value: Any) -> Any:
    """Arrow / numpy values as plain Python (lists, str, int, None)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def parquet_records(path: Path, shown: str) -> Iterator[tuple[int, Any]]:
    """(row number, record) of each row of a Parquet file."""
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(
            f"{shown}: reading Parquet needs pyarrow: pip install pyarrow (or 'localragas[ragas]')") from None
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise DatasetError(shown, None, None, "file not found") from None
    except Exception as e:  # noqa: BLE001 - pyarrow raises its own error types for a bad file
        raise DatasetError(shown, None, None, f"not a readable Parquet file: {e}") from None
    for i, row in enumerate(table.to_pylist(), 1):
        yield i, plain(row)


def hf_dataset_records(path: Path, shown: str) -> Iterator[tuple[int, Any]]:
    """(row number, record) of each row of a Hugging Face `datasets` folder (`save_to_disk`)."""
    try:
        from datasets import DatasetDict, load_from_disk  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(
            f"{shown} is a folder: reading a Hugging Face dataset saved with save_to_disk needs the datasets "
            "package: pip install datasets (or export it to .jsonl or .parquet)") from None
    try:
        ds = load_from_disk(str(path))
    except Exception as e:  # noqa: BLE001 - FileNotFoundError or the datasets library's own errors
        raise DatasetError(shown, None, None, f"not a dataset folder written by save_to_disk: {e}") from None
    if isinstance(ds, DatasetDict):
        if len(ds) != 1:
            raise DatasetError(shown, None, None,
                               f"the dataset has {len(ds)} splits ({', '.join(ds)}); save the one to evaluate alone")
        ds = next(iter(ds.values()))
    for i, row in enumerate(ds, 1):
        yield i, plain(row)
