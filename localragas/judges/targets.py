"""What a judge TARGET names, shared by the backends that load a model file: a catalogue judge or a GGUF file."""
from __future__ import annotations

from pathlib import Path

from .. import models
from ..errors import ConfigError


def judge_names() -> list[str]:
    return [n for n, m in models.CATALOGUE.items() if m.role == "judge"]


def catalogue_judge(target: str) -> tuple[Path, str] | None:
    """(path, sha256) of a catalogue judge, None when TARGET is not a catalogue name. The sha256 is the file's on
    disk, equal to the pinned one (a changed file is refused: models.judge_file)."""
    if target not in models.CATALOGUE:
        return None
    m = models.spec(target)
    if m.role != "judge":
        raise ConfigError(f"'{target}' is an {m.role}, not a judge model")
    return models.judge_file(target)


def check_gguf(p: Path) -> None:
    with open(p, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ConfigError(f"{p} is not a GGUF model file (no GGUF header)")
