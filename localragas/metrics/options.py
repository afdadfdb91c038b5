"""A metric's options: one typed model per metric (pydantic, extra="forbid"), on which each option's name, default,
values (a choice's, each with its description), description and validation are declared once. `Metric.with_options`,
`--metric-option METRIC.KEY=VALUE`, `[metric_options.METRIC]` and `metric_options=` all validate through
`Options.parse`, whose ConfigError names the metric, the option and the valid values; the report's
`meta.metric_options` is `dict(metric.options)`.

A new option is one field of its metric's model: `name: type = Field(default, description=...)` (a number, checked
by a `field_validator` that raises ValueError with the message), or `name: str = choice({value: description, ...})`
(the first value the default).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ..core.errors import ConfigError


def choice(values: Mapping[Any, str], default: Any = None, description: str = "") -> Any:
    """A field whose value is one of `values` (value -> what it does), matched as text (3 and "3" are the same);
    `default`: the first value unless given."""
    return Field(next(iter(values)) if default is None else default, description=description,
                 json_schema_extra={"choices": dict(values)})


OptionsT = TypeVar("OptionsT", bound="Options")


class Options(BaseModel):
    """A metric's options; this base has none (a metric without options). Frozen: a configured metric gets a new one
    (Metric.with_options)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # settings measured, not adopted and taken out (option -> value): an error about one given says so
    removed: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def choices(cls, key: str) -> dict[Any, str] | None:
        """The values of a choice option with their descriptions; None for another option."""
        extra = cls.model_fields[key].json_schema_extra
        return extra.get("choices") if isinstance(extra, dict) else None  # type: ignore[return-value]

    @classmethod
    def parse(cls: type[OptionsT], metric: str, given: Mapping[str, Any]) -> OptionsT:
        """The options `given` (the others at their defaults), validated; a ConfigError naming the metric, the option
        and the valid options or values (and, for a removed setting, that it was removed)."""
        gone = [f"{k}={cls.removed[k]}" for k in sorted(given) if k in cls.removed
                and (k not in cls.model_fields or str(given[k]) == str(cls.removed[k]))]
        note = (f"; {', '.join(gone)} was measured, not adopted and removed from localragas (its measurement: "
                "docs/accuracy.md)") if gone else ""
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            valid = ", ".join(cls.model_fields) or "none"
            raise ConfigError(f"unknown option(s) {', '.join(unknown)} for metric {metric}; valid: {valid}{note}")
        try:
            return cls.model_validate(dict(given))
        except ValidationError as e:
            error = e.errors()[0]
            said = error.get("ctx", {}).get("error")
            reason = str(said) if said is not None else f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
            raise ConfigError(f"{metric}: {reason}{note}") from None

    def __bool__(self) -> bool:
        """Whether the metric has options at all (the report's meta.metric_options lists those that do)."""
        return bool(type(self).model_fields)

    @field_validator("*", mode="before")
    @classmethod
    def _one_of(cls, value: Any, info: ValidationInfo) -> Any:
        """A choice option's value, as its choices spell it; else ValueError listing them with their descriptions."""
        key = info.field_name
        choices = cls.choices(key) if key is not None else None
        if choices is None:
            return value
        for c in choices:
            if str(c) == str(value):
                return c
        valid = "; ".join(f"{k}: {v}" for k, v in choices.items())
        raise ValueError(f"{key} must be one of {', '.join(map(str, choices))}, got {value!r} ({valid})")
