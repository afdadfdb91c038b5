"""Project settings from localragas.toml or the [tool.localragas] table of pyproject.toml.

A settings file is read as any file a user names (localragas.core.inputs): one that is not a regular file (a FIFO, a
device) is refused before it is opened, as is one over CONFIG_MAX_BYTES (16 MiB, far beyond any real settings file).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from ..data.column_map import check_columns
from ..core.errors import ConfigError
from .gate import check_max_error_rate, check_threshold
from ..core.inputs import check_max_input_bytes, failing, read_input

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_MAX_BYTES = 16 << 20  # fixed: max_input_bytes is a setting in this very file


class Settings(BaseModel):
    """Everything a config file may set; command-line flags override it."""

    model_config = ConfigDict(extra="forbid")

    judge: str | None = None
    judge_options: dict[str, Any] = {}
    embedder: str | None = None
    metrics: list[str] | None = None
    thresholds: dict[str, float] = {}
    gate_on: Literal["mean", "lower-bound"] | None = None
    max_error_rate: float | None = None  # share of a metric's samples an error may leave unscored (default 0)
    max_input_bytes: int | None = None  # an input file larger than this is refused (default 4 GiB)
    language: Literal["auto", "en", "zh"] | None = None
    metric_options: dict[str, dict[str, Any]] = {}  # e.g. [metric_options.answer_correctness] weights = [0.5, 0.5]
    columns: dict[str, str] = {}  # field -> the data's column, e.g. [columns] question = "query" (like --columns)
    # [custom_metrics.NAME]: a criterion or rubric of the user's (metrics/custom.py), usable by NAME like a built-in
    custom_metrics: dict[str, dict[str, Any]] = {}
    prompts: dict[str, str] = {}  # [prompts] FAMILY = "FILE": its instruction text (like --prompt; relative to here)
    judge_check: bool | None = None  # false: skip the judge check (like --no-judge-check; default true)
    _source: str | None = PrivateAttr(None)

    @property
    def source(self) -> str | None:
        """The file the settings came from."""
        return self._source


def find_config(start: Path | None = None) -> Path | None:
    """localragas.toml, else a pyproject.toml with a [tool.localragas] table, in the current folder. One that exists
    but is not a regular file (a FIFO, a device) is found, and refused when read, never silently passed over."""
    folder = start or Path.cwd()
    own = folder / "localragas.toml"
    if own.exists():
        return own
    py = folder / "pyproject.toml"
    if py.exists() and "localragas" in _read(py).get("tool", {}):
        return py
    return None


def load_settings(path: Path | None = None) -> Settings:
    path = path or find_config()
    if path is None:
        return Settings()
    if not path.exists():
        raise ConfigError(f"config file {path} not found")
    data = _read(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("localragas", {})
    try:
        settings = Settings(**data)
    except ValidationError as e:
        err = e.errors()[0]
        raise ConfigError(f"{path}: key '{'.'.join(str(x) for x in err['loc'])}': {err['msg']}") from None
    for name, value in settings.thresholds.items():
        check_threshold(name, value)
    try:
        check_columns(settings.columns)
    except ConfigError as e:
        raise ConfigError(f"{path}: key 'columns': {str(e).removeprefix('columns: ')}") from None
    for key, check in (("max_error_rate", check_max_error_rate), ("max_input_bytes", check_max_input_bytes)):
        if getattr(settings, key) is not None:
            try:
                check(getattr(settings, key))
            except ConfigError as e:
                raise ConfigError(f"{path}: key '{key}': {e}") from None
    _declare(settings, path)
    settings._source = str(path)
    return settings


def _declare(settings: Settings, path: Path) -> None:
    """Register the file's custom metrics; its prompt files' paths taken from the file's folder, their families
    checked."""
    from ..metrics.custom import declared  # noqa: PLC0415
    from ..prompts.overrides import TEMPLATES  # noqa: PLC0415

    table = "tool.localragas.custom_metrics" if path.name == "pyproject.toml" else "custom_metrics"
    declared(settings.custom_metrics, str(path), table)
    for family in settings.prompts:
        if family not in TEMPLATES:
            raise ConfigError(f"{path}: key 'prompts.{family}': unknown prompt family; valid: {', '.join(TEMPLATES)}")
    settings.prompts = {k: str(path.parent / Path(v).expanduser()) for k, v in settings.prompts.items()}


def _read(path: Path) -> dict[str, Any]:
    raw = read_input(path, CONFIG_MAX_BYTES, failing(path, ConfigError), "a settings file is at most 16 MiB")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
