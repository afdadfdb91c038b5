"""docs/commands.md documents every flag of every command, each in that command's own section, so a new flag never
goes undocumented; and every `--flag` the page names for a command exists."""
from __future__ import annotations

import re
from pathlib import Path

import click

from localragas.cli import main

DOC = (Path(__file__).resolve().parents[3] / "docs" / "commands.md").read_text(encoding="utf-8")
SECTIONS = {m.group(1): m.group(2) for m in re.finditer(r"^## `localragas ([\w-]+)[^`]*`\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)}


def flags(command: click.Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--") and o != "--help"}


def commands() -> dict[str, set[str]]:
    """Each top-level command and the long flags of it and its subcommands."""
    out = {}
    for name, cmd in main.commands.items():
        found = flags(cmd)
        for sub in getattr(cmd, "commands", {}).values():
            found |= flags(sub)
        out[name] = found
    return out


def test_every_command_has_a_section():
    assert set(commands()) <= set(SECTIONS), set(commands()) - set(SECTIONS)


def test_every_flag_is_documented_in_its_commands_section():
    missing = {name: sorted(f for f in found if f not in SECTIONS.get(name, "")) for name, found in commands().items()}
    assert not any(missing.values()), {k: v for k, v in missing.items() if v}


def test_the_eval_flag_table_names_only_flags_eval_has():
    table = [line for line in SECTIONS["eval"].splitlines() if line.startswith("| `-")]
    named = {f for line in table for f in re.findall(r"--[a-z][a-z-]*", line.split("|")[1])}
    assert named and named <= flags(main.commands["eval"]), named - flags(main.commands["eval"])
