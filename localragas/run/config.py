"""Project settings from localragas.toml or the [tool.localragas] table of pyproject.toml: the keys are RunSettings'
and EvalIO's fields marked IN_FILE (run/settings.py), each checked as the model declares it, so the file can hold a
whole eval (data, metrics, columns, reports, MLflow). Named evals are [evals.NAME] tables of the same keys, layered
over the file's top-level ones (RunSettings.over: tables key by key), but for the report files (out, csv, html, md,
junit): a named eval writes only its own, and two evals that would write one file are refused. Paths in the file are
relative to its folder.

Reading a file is pure: its [custom_metrics] tables are checked here and registered by the run that uses them
(settings.register_custom_metrics). A settings file is read as any file a user names (localragas.core.inputs): one
that is not a regular file (a FIFO, a device) is refused before it is opened, as is one over CONFIG_MAX_BYTES (256 KiB,
far beyond any real settings file). Before the TOML is parsed, a dotted key (or table header) of more than
KEY_PARTS_MAX parts is refused, naming its line: tomllib's time grows with the square of a key's parts (a 200 KB key
of 100,000 parts takes minutes); so the largest file parses in about a second at worst (docs/config-file.md). A file
nested too deeply for the parser (arrays or inline tables a thousand deep) is a ConfigError, not a RecursionError.
"""
from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.inputs import failing, read_input
from .settings import EvalIO, RunSettings, custom_table, file_keys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_MAX_BYTES = 256 << 10  # fixed: max_input_bytes is a setting in this very file
KEY_PARTS_MAX = 16  # a real key has a handful: tool.localragas.evals.NAME.thresholds.faithfulness is 6
# KEY_PARTS_MAX + 1 key parts joined by dots: bare (letters, digits, _ and -, starting after none of them, so a long run
# of them is tried once) or quoted; linear in the file's size
_PART = r"""(?:(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_LONG_KEY = re.compile(rf"(?:{_PART}[ \t]*\.[ \t]*){{{KEY_PARTS_MAX}}}{_PART}")


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


def load_settings(path: str | Path | None = None, eval: str | None = None) -> RunSettings:  # noqa: A002
    """The defaults with the settings file over them (path, else find_config(); none: the defaults), and its
    [evals.`eval`] table over those when `eval` is named. Errors name the file and the key; its prompt files are taken
    from the file's folder."""
    return load_eval(path, eval)[0]


def load_eval(path: str | Path | None = None, eval: str | None = None) -> tuple[RunSettings, EvalIO]:  # noqa: A002
    """The settings file's run settings (as load_settings) and what its eval reads and writes (EvalIO: data, reports,
    MLflow; paths relative to the file's folder). `eval`: the [evals.NAME] table layered over the top-level keys; a
    name the file lacks (or no file at all) is a ConfigError listing the names it has."""
    path = Path(path) if path is not None else find_config()
    if path is None:
        if eval is not None:
            raise ConfigError(f"--eval {eval}: no settings file here (./localragas.toml, or [tool.localragas] in "
                              "./pyproject.toml) to hold [evals.NAME] tables; name one with --config FILE")
        return RunSettings(), EvalIO()
    if not path.exists():
        raise ConfigError(f"config file {path} not found")
    data = _read(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("localragas", {})
    evals = data.pop("evals", {})
    prefix = "tool.localragas." if path.name == "pyproject.toml" else ""
    if not isinstance(evals, dict) or not all(isinstance(t, dict) for t in evals.values()):
        raise ConfigError(f"{path}: key '{prefix}evals': a table of named evals, [{prefix}evals.NAME]")
    _check_keys(data, path, "")
    for name, table in evals.items():
        _check_keys(table, path, f"{prefix}evals.{name}.")
    _refuse_shared_outputs(data, evals, path, prefix)
    settings, io = _layer(RunSettings(), EvalIO(), data, path, str(path))
    if eval is not None:
        if eval not in evals:
            near = difflib.get_close_matches(eval, list(evals), n=1)
            raise ConfigError(f"{path}: no eval {eval!r}" + (f" (did you mean {near[0]!r}?)" if near else "") + (
                f"; evals in the file: {', '.join(evals)}" if evals else f"; the file has no [{prefix}evals.NAME] "
                                                                        "table"))
        own = EvalIO(**{k: v for k, v in io.model_dump().items() if k not in io.reports()})  # its reports its own
        settings, io = _layer(settings, own, evals[eval], path, f"{path} [{prefix}evals.{eval}]")
    return settings, io


def _refuse_shared_outputs(top: dict[str, Any], evals: dict[str, Any], path: Path, prefix: str) -> None:
    """Two evals of the file (the top-level one, the [evals.NAME] ones) that would write one report file: a
    ConfigError naming both and their keys. A named eval's reports are its own (never the top level's), so only
    paths written out twice can meet."""
    seen: dict[Path, str] = {}
    tables = [("the top-level eval", "", top), *((f"[{prefix}evals.{n}]", f"{prefix}evals.{n}.", t)
                                                 for n, t in evals.items())]
    for label, where, table in tables:
        for key in EvalIO().reports():
            if isinstance(table.get(key), str):
                target = Path(_from(path, table[key])).resolve()
                named = f"{label} (key '{where}{key}')"
                if target in seen:
                    raise ConfigError(f"{path}: {seen[target]} and {named} would both write {table[key]}: each eval "
                                      "writes its own reports; give one of them another path")
                seen[target] = named


def _check_keys(table: dict[str, Any], path: Path, where: str) -> None:
    stray = [k for k in table if k not in file_keys()]
    if stray:
        raise ConfigError(f"{path}: key '{where}{stray[0]}': not a setting of the file; valid: "
                          f"{', '.join(file_keys())}" + ("" if where else ", evals"))


def _layer(settings: RunSettings, io: EvalIO, table: dict[str, Any], path: Path, where: str
           ) -> tuple[RunSettings, EvalIO]:
    """`table`'s keys (a settings file's, or one [evals.NAME] table's) over settings and io; its paths taken from
    the file's folder."""
    run = {k: v for k, v in table.items() if k in RunSettings.model_fields}
    settings = settings.over({**run, "config": str(path)}, where)
    _check_declarations(settings, path)
    if "prompts" in run:
        settings = settings.model_copy(update={"prompts": {
            k: _from(path, v) if k in run["prompts"] else v for k, v in settings.prompts.items()}})
    if "labels" in run:
        settings = settings.model_copy(update={"labels": [Path(_from(path, v)) for v in settings.labels]})
    paths = [n for n, f in EvalIO.model_fields.items() if f.annotation == Path | None]
    given = {k: _from(path, v) if k in paths and isinstance(v, str) else v
             for k, v in table.items() if k in EvalIO.model_fields}
    return settings, io.over(given, where)


def _from(path: Path, value: str | Path) -> str:
    """A path written in the settings file at `path`, taken from the file's folder (an absolute one as it is)."""
    return str(path.parent / Path(value).expanduser())


def _check_declarations(settings: RunSettings, path: Path) -> None:
    """The file's custom metrics made (not registered) and its prompt families checked: a bad one is refused now."""
    from ..metrics.custom import custom_metrics_of  # noqa: PLC0415
    from ..prompts.overrides import TEMPLATES  # noqa: PLC0415

    custom_metrics_of(settings.custom_metrics, str(path), custom_table(str(path)))
    for family in settings.prompts:
        if family not in TEMPLATES:
            raise ConfigError(f"{path}: key 'prompts.{family}': unknown prompt family; valid: {', '.join(TEMPLATES)}")


def _read(path: Path) -> dict[str, Any]:
    raw = read_input(path, CONFIG_MAX_BYTES, failing(path, ConfigError), "a settings file is at most 256 KiB")
    try:
        text = raw.decode("utf-8")
        long = _LONG_KEY.search(text)
        if long:
            raise ConfigError(f"{path}, line {text.count(chr(10), 0, long.start()) + 1}: a dotted key of more than "
                              f"{KEY_PARTS_MAX} parts ({long.group()[:40]}...); a settings key has a handful")
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply (arrays or inline tables within each other)"
                          ) from None
