"""The marks a run setting's declaration (run/settings.py RunSettings, EvalIO) carries: how it is given on the command
line (Flag), whether it is part of the resume checkpoint's key (InKey) and whether a settings file may set it
(IN_FILE)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal

IN_FILE = "in_file"  # the marker of a setting a settings file may set (localragas.toml, [tool.localragas])


@dataclass(frozen=True)
class Flag:
    """How a setting is given on the command line. kind: "value" (one value; none given leaves the setting),
    "items" (repeatable; `parse(items, flag)` makes the value), "off" (a switch that sets False: --no-gate),
    "toggle" (--x/--no-x: `default` when not used; None: not given). The option's help, type, bounds and choices are
    the field's. section: where `eval --help` lists it (cli/options.py HELP_SECTIONS: Common first, then Outputs,
    Gate, Judge, Input, Run)."""

    names: tuple[str, ...]
    metavar: str | None = None  # "FILE" for a Path: a file (click refuses a folder), else a Path is a folder
    kind: Literal["value", "items", "off", "toggle"] = "value"
    parse: Callable[[Iterable[str], str], Any] | None = None
    default: Any = None  # the command line's own default, shown in --help (toggles, --concurrency)
    unit: str | None = None  # in error messages: "a whole number of bytes"
    section: str = ""

    @property
    def dest(self) -> str:
        """The click parameter's name: the long flag's, e.g. judge_option for --judge-option."""
        return self.names[0].split("/")[0].removeprefix("--").replace("-", "_")

    def value(self, given: Any) -> Any:
        """The setting's value from what click gave (None: not given)."""
        if self.kind == "items":
            return self.parse(given, self.names[0]) if given else None  # type: ignore[misc]
        if self.kind == "off":
            return False if given else None
        if self.kind == "value" and self.parse is not None and given is not None:
            return self.parse(given, self.names[0])
        return given


@dataclass(frozen=True)
class InKey:
    """The setting decides a run's results: it is part of the resume checkpoint's key (evaluation.checkpoint_key), at
    `slot` (slot 1 is the judge's scoring fingerprint); when_set: only when it is set (a new keyed setting takes the
    next slot with when_set, so the checkpoints of runs without it keep their keys)."""

    slot: int
    when_set: bool = False
