"""The files and folders a run reads beside its data, each with what it is: the output guard's inputs
(report/destinations.py check_outputs), so that no report, CSV, comparison or fitted map is written over one. The
settings file, the judge cache folder, the --prompt files, the --labels files, the calibration file (--judge-option
calibration=FILE), the judge's and the embedder's model files; localragas's own state (the run history, the
checkpoints: core/paths.py state_inputs) every command adds (cli/output.py)."""
from __future__ import annotations

from pathlib import Path

from ..judges import catalogue
from ..judges.calibrated import OFF, OPTION
from .settings import RunSettings


def files_read(settings: RunSettings) -> list[tuple[Path, str]]:
    """(path, what it is) of every file or folder a run of these settings reads besides its data."""
    found: list[tuple[Path, str]] = []
    if settings.config:
        found.append((Path(settings.config), "the settings file"))
    cache = settings.cache_folder()
    if cache is not None:
        found.append((cache, "the judge cache folder"))
    for family, path in settings.prompts.items():
        found.append((Path(path).expanduser(), f"the --prompt file of {family}"))
    for labels in settings.labels:
        found.append((Path(labels), "a --labels file"))
    calibration = settings.judge_options.get(OPTION)
    if isinstance(calibration, (str, Path)) and str(calibration).strip().lower() != OFF:
        found.append((Path(calibration).expanduser(), f"the calibration file of --judge-option {OPTION}"))
    for spec, what in ((settings.judge or catalogue.DEFAULT_JUDGE, "the judge's model"),
                       (settings.embedder, "the embedder's model")):
        model = model_file(spec)
        if model is not None:
            found.append((model, what))
    return found


def model_file(spec: str | None) -> Path | None:
    """The file or folder a judge or embedder named `spec` is read from, when it is one: a path (after a BACKEND:
    prefix or not) that exists, or a catalogue judge's file in the models folder."""
    if not spec:
        return None
    _, sep, target = spec.partition(":")
    for text in ([target] if sep else []) + [spec]:
        path = Path(text).expanduser()
        if text and path.exists():
            return path
    entry = catalogue.CATALOGUE.get(spec)
    return catalogue.models_dir() / entry.filename if entry is not None and entry.role == "judge" else None
