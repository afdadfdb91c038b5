"""Judges by name: every backend, built-in or a plugin's, is found through judges/registry.py and built by its
factory (judges/backends.py for the built-ins); heavy imports happen in the factory."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from . import catalogue
from ..core.errors import ConfigError
from .base import Completion, Judge, NextTokens
from .calibrated import split_calibration
from .judging import Judging, JudgeStats
from .fake import FakeJudge
from ..core.plugins import PluginError
from .registry import JUDGE_BACKENDS, Factory
from .targets import judge_names, looks_like_path, missing_model

BACKENDS = JUDGE_BACKENDS.names()  # the built-in backends: llamacpp, openai, transformers, fake


def get_judge(spec: str | None = None, options: dict[str, Any] | None = None) -> Judge:
    """A judge from a spec: a catalogue name, a .gguf path, 'fake', 'BACKEND:NAME_OR_PATH', or 'openai:MODEL'
    (with options["base_url"]: an OpenAI-compatible server), or 'PLUGIN:MODEL' for a backend a package adds (entry
    point group localragas.judges: a factory(MODEL, options) -> Judge). The options are the backend's settings;
    options["calibration"] (a file, or "none") is a run's, not the judge's (judges/calibrated.py run_calibration): a
    bad file is refused here, before any model loads, and the option left out."""
    options, _ = split_calibration(options)
    spec = spec or catalogue.DEFAULT_JUDGE
    backend, sep, target = spec.partition(":")
    factory = JUDGE_BACKENDS.factory(backend) if sep else None
    if factory is None:  # a plain name or path (a Windows path's drive letter is no backend either)
        backend, target = ("fake", "") if spec == "fake" else ("llamacpp", spec)
        if backend == "llamacpp" and target not in catalogue.CATALOGUE and not Path(target).expanduser().is_file():
            if looks_like_path(target):
                raise missing_model(target)
            raise ConfigError(
                f"unknown judge '{spec}'; valid: {', '.join(judge_names())}, fake, a .gguf path, "
                f"or BACKEND:MODEL with BACKEND in {', '.join(BACKENDS)}"
            )
        factory = JUDGE_BACKENDS.built(backend)
    return _made(factory, backend, target, options)


def _made(factory: Factory, backend: str, target: str, options: dict[str, Any]) -> Judge:
    judge = factory(target, options)
    if not isinstance(judge, Judge):
        raise PluginError(f"the {backend!r} judge plugin (entry point group localragas.judges) made a "
                          f"{type(judge).__name__}, not a localragas Judge")
    return judge


__all__ = ["BACKENDS", "Completion", "FakeJudge", "Judge", "JudgeStats", "Judging", "NextTokens", "get_judge",
           "judge_names"]
