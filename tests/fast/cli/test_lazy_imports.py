"""A command imports what it uses: `localragas --help` lists the commands without importing any of them, and `eval`
imports the writer of each output asked for, no other (a child process's sys.modules, as the user's run has it); the
listing's sentences are the commands' own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click

import localragas
from cli_helpers import cli
from localragas.cli import COMMANDS, main

ROOT = Path(localragas.__file__).resolve().parents[1]  # the checkout under test, imported by the child too
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--limit", "1", "-m", "faithfulness", "--no-cache", "--no-resume",
        "--no-history", "--no-progress"]
# the report writers and the report pages: a run imports one only when its output is asked for
WRITERS = {"localragas.report.json_report", "localragas.report.csv_report", "localragas.report.html_report",
           "localragas.report.markdown", "localragas.report.junit", "localragas.report.dashboard",
           "localragas.report.comparison", "localragas.report.comparison_html", "localragas.report.calibration",
           "localragas.report.calibration_html", "localragas.report.review_page", "localragas.report.plot_page"}
# the modules of the commands (localragas/cli/eval.py, reports.py, ...)
COMMAND_MODULES = {f"localragas.cli.{module}" for module, _, _ in COMMANDS.values()}
# the list of modules a child process writes when its command is done
CHILD = ("import json, sys\nfrom localragas.cli import main\ntry:\n    main(sys.argv[2:])\nexcept SystemExit as e:\n"
         "    code = e.code\nopen(sys.argv[1], 'w').write(json.dumps(sorted(m for m in sys.modules "
         "if m.split('.')[0] == 'localragas')))\nsys.exit(code)\n")


def modules_after(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`localragas ARGS` in a fresh interpreter: its result, and the localragas modules it had imported at the end."""
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", CHILD, str(out), *args], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}, cwd=tmp_path, timeout=120)
    return done, set(json.loads(out.read_text(encoding="utf-8")))


def test_help_lists_every_command_and_imports_none(tmp_path):
    done, loaded = modules_after(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.split("Commands:\n")[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS)
    assert not loaded & COMMAND_MODULES, loaded & COMMAND_MODULES
    beyond = [m for m in loaded if m not in ("localragas", "localragas.cli") and not m.startswith("localragas.core")]
    assert not beyond, beyond  # the group and a few foundation modules (errors, printable text), nothing else


def test_eval_without_outputs_imports_no_report_writer_nor_another_command(tmp_path):
    done, loaded = modules_after(tmp_path, "eval", str(EXAMPLES), *FAST)
    assert done.returncode in (0, 1), done.stderr  # scored and gated
    assert "faithfulness" in done.stdout and "wrote" not in done.stdout
    assert not loaded & WRITERS, sorted(loaded & WRITERS)
    assert loaded & COMMAND_MODULES == {"localragas.cli.eval"}


def test_eval_imports_the_writer_of_an_output_asked_for_and_no_other(tmp_path):
    done, loaded = modules_after(tmp_path, "eval", str(EXAMPLES), *FAST, "--md", str(tmp_path / "r.md"))
    assert done.returncode in (0, 1), done.stderr
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("### localragas: ")
    assert loaded & WRITERS == {"localragas.report.markdown"}


def test_the_listing_shows_each_commands_own_first_sentence():
    """COMMANDS declares the sentence `localragas --help` lists; it is the one the command's help begins with."""
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None and command.help is not None
        assert command.get_short_help_str(10**6) == COMMANDS[name][2], name


def test_an_unknown_command_is_refused_with_the_nearest_name():
    r = cli("evl")
    assert r.exit_code == 2 and "No such command 'evl'" in r.output
    if hasattr(click.exceptions, "NoSuchCommand"):  # click 8.4 and later suggest a name
        assert "Did you mean 'eval'?" in r.output
