"""Project settings from localragas.toml or the [tool.localragas] table of pyproject.toml: the keys are RunSettings'
fields marked IN_FILE (run/settings.py), each checked as the model declares it.

Reading a file is pure: its [custom_metrics] tables are checked here and registered by the run that uses them
(settings.register_custom_metrics). A settings file is read as any file a user names (localragas.core.inputs): one
that is not a regular file (a FIFO, a device) is refused before it is opened, as is one over CONFIG_MAX_BYTES (16 MiB,
far beyond any real settings file).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.inputs import failing, read_input
from .settings import RunSettings, custom_table, in_file, validated

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_MAX_BYTES = 16 << 20  # fixed: max_input_bytes is a setting in this very file


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


def load_settings(path: str | Path | None = None) -> RunSettings:
    """The defaults with the settings file over them (path, else find_config(); none: the defaults). Errors name the
    file and the key; its prompt files are taken from the file's folder."""
    path = Path(path) if path is not None else find_config()
    if path is None:
        return RunSettings()
    if not path.exists():
        raise ConfigError(f"config file {path} not found")
    data = _read(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("localragas", {})
    stray = [k for k in data if k not in RunSettings.model_fields or not in_file(k)]
    if stray:
        valid = [n for n in RunSettings.model_fields if in_file(n)]
        raise ConfigError(f"{path}: key '{stray[0]}': not a setting of the file; valid: {', '.join(valid)}")
    settings = validated({**data, "config": str(path)}, str(path))
    _check_declarations(settings, path)
    return settings.model_copy(update={"prompts": {k: str(path.parent / Path(v).expanduser())
                                                   for k, v in settings.prompts.items()}})


def _check_declarations(settings: RunSettings, path: Path) -> None:
    """The file's custom metrics made (not registered) and its prompt families checked: a bad one is refused now."""
    from ..metrics.custom import custom_metrics_of  # noqa: PLC0415
    from ..prompts.overrides import TEMPLATES  # noqa: PLC0415

    custom_metrics_of(settings.custom_metrics, str(path), custom_table(str(path)))
    for family in settings.prompts:
        if family not in TEMPLATES:
            raise ConfigError(f"{path}: key 'prompts.{family}': unknown prompt family; valid: {', '.join(TEMPLATES)}")


def _read(path: Path) -> dict[str, Any]:
    raw = read_input(path, CONFIG_MAX_BYTES, failing(path, ConfigError), "a settings file is at most 16 MiB")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
