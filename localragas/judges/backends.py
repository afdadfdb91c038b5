"""The built-in judge backends' factories, `factory(model, options) -> Judge` as a plugin's are (registered in
judges/registry.py); each imports its backend's module, and that module its heavy dependencies, only when called."""
from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from . import catalogue
from ..core.errors import ConfigError
from .base import Judge
from .fake import FakeJudge
from .targets import catalogue_judge, judge_names, looks_like_path, missing_model

_Settings = TypeVar("_Settings", bound=BaseModel)


def llamacpp(target: str, options: dict[str, Any]) -> Judge:
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


def openai(target: str, options: dict[str, Any]) -> Judge:
    from .openai_compat import OpenAIJudge, OpenAISettings  # noqa: PLC0415

    if not options.get("base_url"):
        raise ConfigError(
            "the openai judge needs the server's URL: --judge-option base_url=http://HOST:PORT/v1 (there is no "
            "default; several URLs, comma-separated, are used round-robin)"
        )
    settings = _settings(OpenAISettings, options)
    return OpenAIJudge(target, settings)


def transformers(target: str, options: dict[str, Any]) -> Judge:
    from .transformers_judge import TransformersSettings, make_judge  # noqa: PLC0415

    settings = _settings(TransformersSettings, options)
    return make_judge(target, settings)


def fake(target: str, options: dict[str, Any]) -> Judge:
    if options:
        raise ConfigError("the fake judge takes no --judge-option but calibration=FILE")
    return FakeJudge(record=False, checked=True)  # made from a name: nobody reads its calls; the judge check runs


def _settings(cls: type[_Settings], options: dict[str, Any]) -> _Settings:
    """The backend's settings from --judge-option values; a bad one is a ConfigError that lists the valid names."""
    try:
        return cls(**options)
    except ValidationError as e:
        raise ConfigError(f"bad --judge-option: {_first_error(e)}; options: {', '.join(cls.model_fields)}") from None


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    return f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
