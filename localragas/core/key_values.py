"""KEY=VALUE items: the one parser of --judge-option, --metric-option, --columns, --threshold and their config and
pytest counterparts. A malformed item is a ConfigError naming where it came from and the item itself:
"--judge-option: 'n_ctx' must look like KEY=VALUE, e.g. n_ctx=4096"."""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from .errors import ConfigError


def split_item(item: str, where: str, shape: str = "KEY=VALUE", example: str | None = None) -> tuple[str, str]:
    """'key = value' -> ('key', 'value'), both stripped; no '=' or an empty key is refused."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{where}: '{item}' must look like {shape}" + (f", e.g. {example}" if example else ""))
    return key.strip(), value.strip()


def option_value(text: str) -> Any:
    """A value as JSON when it is JSON (4096, -1, true, [0.5, 0.5]), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def comma_items(values: Iterable[str]) -> list[str]:
    """Repeated and comma-separated items ('a,b', 'c') -> ['a', 'b', 'c'], blanks dropped."""
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def parse_options(items: Iterable[str], where: str, base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """KEY=VALUE items (values read by option_value) over base, e.g. --judge-option over [judge_options]."""
    out = dict(base or {})
    for item in items:
        key, value = split_item(item, where, example="n_ctx=4096")
        out[key] = option_value(value)
    return out


def parse_metric_options(items: Iterable[str], where: str,
                         base: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """METRIC.KEY=VALUE items over base (per metric, per key), e.g. --metric-option over [metric_options]."""
    out = {name: dict(opts) for name, opts in (base or {}).items()}
    for item in items:
        shape, example = "METRIC.KEY=VALUE", "answer_correctness.weights=0.5,0.5"
        target, value = split_item(item, where, shape, example)
        name, dot, key = target.partition(".")
        if not dot or not name.strip() or not key.strip():
            raise ConfigError(f"{where}: '{item}' must look like {shape}, e.g. {example}")
        out.setdefault(name.strip(), {})[key.strip()] = option_value(value)
    return out


def parse_columns(items: Iterable[str], where: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """FIELD=COLUMN[,FIELD=COLUMN] items over base, e.g. --columns over [columns]."""
    out = dict(base or {})
    for item in comma_items(items):
        field, column = split_item(item, where, "FIELD=COLUMN", "question=query")
        if not column:
            raise ConfigError(f"{where}: '{item}' must look like FIELD=COLUMN, e.g. question=query")
        out[field] = column
    return out


def parse_prompts(items: Iterable[str], where: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """FAMILY=FILE items over base, e.g. --prompt over [prompts]: a prompt family's instruction text from a file."""
    out = dict(base or {})
    for item in items:
        family, path = split_item(item, where, "FAMILY=FILE", "verify_statement=instruction.txt")
        if not path:
            raise ConfigError(f"{where}: '{item}' must look like FAMILY=FILE, e.g. verify_statement=instruction.txt")
        out[family] = path
    return out
