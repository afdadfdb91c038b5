"""`eval --help` lists its options by section, the common ones first: Common, Outputs, Gate, Judge, Input, Run (then
--help). A run setting's section is one attribute of its declaration (run/settings.py Flag.section); the other
options say theirs where they are declared (SectionedOption)."""
from __future__ import annotations

import re

import click
import pytest

from localragas.cli.options import HELP_SECTIONS, SectionedOption
from localragas.run.settings import EvalIO, flag_of, flagged

from cli_helpers import cli


def sections() -> dict[str, list[str]]:
    """Each heading of `eval --help` -> the long flags listed under it, in order."""
    r = cli("eval", "--help")
    assert r.exit_code == 0, r.output
    out: dict[str, list[str]] = {}
    heading = None
    for line in r.output.splitlines():
        if re.fullmatch(r"[A-Z]\w*:", line):
            heading = line[:-1]
            out[heading] = []
        elif heading and (m := re.match(r"\s{2}(?:-\w, )?(--[\w-]+)", line)):
            out[heading].append(m.group(1))
    return out


def test_the_sections_come_in_order_with_the_common_options_first():
    got = sections()
    assert list(got) == [*HELP_SECTIONS, "Other"]
    assert got["Common"] == ["--metrics", "--judge", "--embedder", "--limit", "--out"]
    assert got["Outputs"] == ["--no-sample-text", "--csv", "--html", "--md", "--junit", "--mlflow", "--mlflow-experiment",
                              "--mlflow-run-name", "--ragas-names"]
    assert got["Gate"] == ["--threshold", "--no-gate", "--max-error-rate", "--gate-on", "--labels"]
    assert got["Other"] == ["--help"]


def test_each_setting_is_listed_once_under_its_declared_section():
    got = sections()
    listed = [flag for flags in got.values() for flag in flags]
    assert len(listed) == len(set(listed))
    for name in [*flagged(), *flagged(EvalIO)]:
        flag = flag_of(name)
        assert flag.section in HELP_SECTIONS, name  # every setting on the command line declares one
        assert flag.names[0].split("/")[0] in got[flag.section], name


def test_a_section_that_does_not_exist_is_refused_where_it_is_declared():
    with pytest.raises(ValueError, match="section 'Misc' is not one of Common, Outputs"):
        click.option("--x", cls=SectionedOption, section="Misc")(lambda x: None)
