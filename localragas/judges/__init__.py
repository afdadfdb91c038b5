"""Judge registry: backends are registered lazily; heavy imports happen in the factory."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from . import catalogue
from ..core.errors import ConfigError
from .base import Completion, Judge
from .calibrated import split_calibration
from .judging import Judging, JudgeStats
from .fake import FakeJudge
from .targets import catalogue_judge, judge_names, looks_like_path, missing_model

BACKENDS = ("llamacpp", "openai", "transformers", "fake")

_Settings = TypeVar("_Settings", bound=BaseModel)


def _llamacpp(target: str, options: dict[str, Any]) -> Judge:
    from .llamacpp import LlamaCppJudge, LlamaCppSettings  # noqa: PLC0415

    settings = _settings(LlamaCppSettings, options)
    if found := catalogue_judge(target):
        return LlamaCppJudge(*found, target, settings)
    p = Path(target).expanduser()
    if not p.is_file() and looks_like_path(target):
        raise missing_model(target)
    if not p.is_file():
        raise ConfigError(
            f"judge '{target}' is neither a catalogue model ({', '.join(judge_names())}) nor a GGUF file"
        )
    catalogue.check_gguf(p)
    return LlamaCppJudge(p, catalogue.file_sha256(p), p.name, settings)  # hashed once per file version


def _openai(target: str, options: dict[str, Any]) -> Judge:
    from .openai_compat import OpenAIJudge, OpenAISettings  # noqa: PLC0415

    if not options.get("base_url"):
        raise ConfigError(
            "the openai judge needs the server's URL: --judge-option base_url=http://HOST:PORT/v1 (there is no "
            "default; several URLs, comma-separated, are used round-robin)"
        )
    settings = _settings(OpenAISettings, options)
    return OpenAIJudge(target, settings)


def _transformers(target: str, options: dict[str, Any]) -> Judge:
    from .transformers_judge import TransformersSettings, make_judge  # noqa: PLC0415

    settings = _settings(TransformersSettings, options)
    return make_judge(target, settings)


def _fake(target: str, options: dict[str, Any]) -> Judge:
    if options:
        raise ConfigError("the fake judge takes no --judge-option but calibration=FILE")
    return FakeJudge(record=False, checked=True)  # made from a name: nobody reads its calls; the judge check runs


_FACTORIES: dict[str, Callable[[str, dict[str, Any]], Judge]] = {
    "llamacpp": _llamacpp, "openai": _openai, "transformers": _transformers, "fake": _fake,
}


def get_judge(spec: str | None = None, options: dict[str, Any] | None = None) -> Judge:
    """A judge from a spec: a catalogue name, a .gguf path, 'fake', 'BACKEND:NAME_OR_PATH', or 'openai:MODEL'
    (with options["base_url"]: an OpenAI-compatible server), or 'PLUGIN:MODEL' for a backend a package adds (entry
    point group localragas.judges: a factory(MODEL, options) -> Judge). The options are the backend's settings;
    options["calibration"] (a file, or "none") is a run's, not the judge's (judges/calibrated.py run_calibration): a
    bad file is refused here, before any model loads, and the option left out."""
    options, _ = split_calibration(options)
    spec = spec or catalogue.DEFAULT_JUDGE
    backend, sep, target = spec.partition(":")
    if sep and backend not in BACKENDS and (plugin := _plugin_factory(backend)) is not None:
        return _made_by_plugin(plugin, backend, target, options)
    if not (sep and backend in BACKENDS):
        backend, target = ("fake", "") if spec == "fake" else ("llamacpp", spec)
        if backend == "llamacpp" and target not in catalogue.CATALOGUE and not Path(target).expanduser().is_file():
            if looks_like_path(target):
                raise missing_model(target)
            raise ConfigError(
                f"unknown judge '{spec}'; valid: {', '.join(judge_names())}, fake, a .gguf path, "
                f"or BACKEND:MODEL with BACKEND in {', '.join(BACKENDS)}"
            )
    return _FACTORIES[backend](target, options)


def _plugin_factory(backend: str) -> Callable[[str, dict[str, Any]], Judge] | None:
    """The factory a `localragas.judges` entry point named `backend` gives (localragas.core.plugins), loaded now."""
    from ..core.plugins import JUDGES, found, load  # noqa: PLC0415

    ep = found(JUDGES).get(backend)
    return None if ep is None else load(ep, JUDGES, "a judge backend")


def _made_by_plugin(factory: Callable[[str, dict[str, Any]], Judge], backend: str, target: str,
                    options: dict[str, Any]) -> Judge:
    from ..core.plugins import PluginError  # noqa: PLC0415

    judge = factory(target, options)
    if not isinstance(judge, Judge):
        raise PluginError(f"the {backend!r} judge plugin (entry point group localragas.judges) made a "
                          f"{type(judge).__name__}, not a localragas Judge")
    return judge


def _settings(cls: type[_Settings], options: dict[str, Any]) -> _Settings:
    """The backend's settings from --judge-option values; a bad one is a ConfigError that lists the valid names."""
    try:
        return cls(**options)
    except ValidationError as e:
        raise ConfigError(f"bad --judge-option: {_first_error(e)}; options: {', '.join(cls.model_fields)}") from None


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    return f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"


__all__ = ["BACKENDS", "Completion", "FakeJudge", "Judge", "JudgeStats", "Judging", "get_judge", "judge_names"]
