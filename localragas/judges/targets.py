"""What a judge TARGET names, shared by the backends that load a model file: a catalogue judge or a GGUF file."""
from __future__ import annotations

from pathlib import Path

from . import catalogue
from ..core.errors import ConfigError, ModelNotFoundError


def judge_names() -> list[str]:
    return [n for n, m in catalogue.CATALOGUE.items() if m.role == "judge"]


def catalogue_judge(target: str) -> tuple[Path, str] | None:
    """(path, sha256) of a catalogue judge, None when TARGET is not a catalogue name. The sha256 is the file's on
    disk, equal to the pinned one (a changed file is refused: catalogue.judge_file)."""
    if target not in catalogue.CATALOGUE:
        return None
    m = catalogue.spec(target)
    if m.role != "judge":
        raise ConfigError(f"'{target}' is an {m.role}, not a judge model")
    return catalogue.judge_file(target)


def looks_like_path(target: str) -> bool:
    """A judge TARGET meant as a file or folder, not a catalogue name: it ends in .gguf, holds a path separator, or
    starts with ~ or a dot."""
    return target.lower().endswith(".gguf") or "/" in target or "\\" in target or target.startswith(("~", "."))


def missing_model(target: str, what: str = "judge model file") -> ModelNotFoundError:
    """The error for a judge TARGET path that names nothing (a typo, the wrong folder, a file not copied in)."""
    p = Path(target).expanduser()
    where = "" if p.is_absolute() else f" (looked for {Path.cwd() / p})"
    return ModelNotFoundError(
        f"{what} not found: {target}{where}; check the path, or name a catalogue judge ({', '.join(judge_names())}; "
        "`localragas models list` shows which are present)")
