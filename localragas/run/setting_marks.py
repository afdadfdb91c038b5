"""The marks a run setting's declaration (run/settings.py RunSettings, EvalIO) carries: how it is given on the command
line (Flag) and whether a settings file may set it (IN_FILE)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

from ..core.key_values import comma_items

IN_FILE = "in_file"  # the marker of a setting a settings file may set (localragas.toml, [tool.localragas])


@dataclass(frozen=True)
class Flag:
    """How a setting is given on the command line. kind: "value" (one value, `parse(text)` when given; none given
    leaves the setting), "items" (repeatable; `parse(items, flag)` makes the value, default: the comma-separated
    items), "off" (a switch that sets False: --no-gate), "toggle" (--x/--no-x: `default` when not used; None: not
    given). The option's help, type, bounds and choices are the field's. section: where `eval --help` lists it
    (cli/options.py HELP_SECTIONS: Common first, then Outputs, Gate, Judge, Input, Run)."""

    names: tuple[str, ...]
    metavar: str | None = None  # "FILE" for a Path: a file (click refuses a folder), else a Path is a folder
    kind: Literal["value", "items", "off", "toggle"] = "value"
    parse: Callable[..., Any] | None = None
    default: Any = None  # the command line's own default, shown in --help (toggles, --concurrency)
    unit: str | None = None  # in error messages: "a whole number of bytes"
    section: str = ""

    @property
    def dest(self) -> str:
        """The click parameter's name: the long flag's, e.g. judge_option for --judge-option."""
        return self.names[0].split("/")[0].removeprefix("--").replace("-", "_")

    def value(self, given: Any) -> Any:
        """The setting's value from what click gave (None, or no items: not given)."""
        if self.kind == "items":
            return ((self.parse(given, self.names[0]) if self.parse else comma_items(given)) or None) if given else None
        if self.kind == "off":
            return False if given else None
        return self.parse(given) if self.parse is not None and given is not None else given
