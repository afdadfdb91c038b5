"""What the command modules share: the exit codes (the same for every command, mapped in cli.py) and the options
several commands take: the models (`eval`, `calibrate`, `generate`), the gate and the report formats (`eval`,
`report`, `merge`), the input limit and the prompt files."""
from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args, get_origin

import click

from ..core.inputs import DEFAULT_MAX_INPUT_BYTES
from ..core.key_values import comma_items
from ..run.settings import bounds, field_of, flag_of

EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3  # never 1: CI must tell a crash from a failed gate
EXIT_NOT_EVALUATED = 4  # a broken judge, cache or embedder: never 0, and not 1 (the data may well be fine)
EXIT_JUDGE_CHECK_FAILED = 5  # the judge cannot tell obvious supported from unsupported items: nothing was scored
EXIT_PIPELINE_UNREACHABLE = 6  # run-rag stopped: the RAG pipeline could not be reached (the rows done so far kept)
EXIT_METHOD_CHANGED = 7  # compare --fail-on-regression: the runs measured differently, a regression is not the RAG's
EXIT_ENGINE_LOST = 8  # eval --engine dask: the scheduler went away (or was never reached); the checkpoint is kept
EXIT_TOO_FEW_PAIRS = 9  # compare --fail-on-regression: a metric has fewer pairs than --min-pairs, so no verdict

# The sections of `eval --help`, in order: a run setting's is its Flag.section (run/settings.py), another option's
# its `section=` (SectionedOption)
HELP_SECTIONS = ("Common", "Outputs", "Gate", "Judge", "Input", "Run")


class SectionedOption(click.Option):
    """An option that knows its --help section (one of HELP_SECTIONS; "": listed last, under "Other")."""

    def __init__(self, *args, section: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        if section and section not in HELP_SECTIONS:
            raise ValueError(f"{self.name}: section {section!r} is not one of {', '.join(HELP_SECTIONS)}")
        self.section = section


class SectionedCommand(click.Command):
    """A command whose --help lists its options by section, the common ones first (click has no option groups)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                groups.setdefault(getattr(param, "section", ""), []).append(record)
        for section in (*HELP_SECTIONS, ""):
            if section in groups:
                with formatter.section(section or "Other"):
                    formatter.write_dl(groups[section])


def setting_option(name: str, help: str | None = None):  # noqa: A002 - click's word
    """The click option of a run setting, made from its declaration (run/settings.py RunSettings, or EvalIO for what
    eval reads and writes): its flag names, metavar and kind (Flag), its type, bounds and choices (the field's
    annotation), its help (the field's description, or `help` where a command means it otherwise). The parameter is
    named Flag.dest (judge_option, no_gate), as settings.from_flags reads it."""
    field, flag = field_of(name), flag_of(name)
    assert flag is not None, f"{name} is not given on the command line"
    kw: dict = {"help": help or field.description, "metavar": flag.metavar}
    if flag.kind == "items":
        kw["multiple"] = True
    elif flag.kind == "off":
        kw["is_flag"] = True
    elif flag.kind == "toggle":
        two = "/" in flag.names[0]  # --x/--no-x: shown with its default; else a switch (--skip-invalid)
        kw.update({"default": flag.default, "show_default": True} if two else {"is_flag": True})
    else:
        kinds = [a for a in get_args(field.annotation) or (field.annotation,) if a is not type(None)]
        kind = field.annotation if get_origin(field.annotation) is Literal else kinds[0]
        low, high = bounds(field).get("ge"), bounds(field).get("le")
        if get_origin(kind) is Literal:
            kw["type"] = click.Choice(get_args(kind))
        elif kind in (int, float) and (low, high) != (None, None):
            kw["type"] = (click.IntRange if kind is int else click.FloatRange)(low, high)
        elif kind is Path:  # a FILE (the reports), else a folder (--cache-dir)
            kw["type"] = click.Path(**{"dir_okay" if flag.metavar == "FILE" else "file_okay": False}, path_type=Path)
        if flag.default is not None:
            kw.update(default=flag.default, show_default=True)
    return click.option(*flag.names, flag.dest, cls=SectionedOption, section=flag.section, **kw)


def setting_options(*names: str):
    """The options of these run settings, in this order in --help."""
    def decorate(fn):
        for name in reversed(names):
            fn = setting_option(name)(fn)
        return fn
    return decorate


model_options = setting_options("judge", "judge_options", "embedder")  # the models `generate` uses, as eval's
# What `report` and `merge` take to write a stored run again and gate it anew (a run made with --no-gate too): the
# report formats and the gate's options, as eval's
regate_options = setting_options("html", "md", "junit", "thresholds", "gate_on", "gate", "max_error_rate")
max_input_bytes_option = setting_option("max_input_bytes")
labels_option = setting_option("labels")


def label_files(given: tuple[str, ...] | None) -> list[Path]:
    """--labels of `report` and `merge` (repeatable, comma-separated) as the files."""
    return [Path(p) for p in comma_items(given or ())]


def report_limit(max_input_bytes: int | None) -> int:
    """--max-input-bytes of `report`, `merge` and `compare` (which read no settings file), else the default."""
    return DEFAULT_MAX_INPUT_BYTES if max_input_bytes is None else max_input_bytes


ragas_names_option = click.option(
    "--ragas-names", is_flag=True, cls=SectionedOption, section="Outputs",
    help="Name the metrics in the JSON and CSV files as ragas does, e.g. factual_correctness(mode=f1).")
