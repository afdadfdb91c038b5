"""The labelled example shipped for `calibrate` (examples/calibrate_labelled.jsonl): about 20 rows in the format
calibrate reads, and the command the docs give for it runs as written with the fake judge."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from cli_helpers import cli

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "examples/calibrate_labelled.jsonl"


def _doc_commands() -> list[list[str]]:
    found = []
    for page in ("docs/commands.md", "docs/calibration.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        lines = re.findall(rf"^localragas (calibrate {re.escape(EXAMPLE)}[^#\n]*)", text, flags=re.M)
        assert lines, f"{page} gives no command for {EXAMPLE}"
        found += [shlex.split(line) for line in lines]
    return found


def test_the_example_holds_about_20_binary_labelled_rows_of_two_metrics():
    rows = [json.loads(line) for line in (ROOT / EXAMPLE).read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    labels = [(r["label"]["metric"], r["label"]["kind"], r["label"]["value"]) for r in rows]
    for metric in ("faithfulness", "context_precision"):
        values = [v for m, k, v in labels if m == metric and k == "binary"]
        assert 0 in values and 1 in values  # both classes: ROC AUC is defined


def test_the_docs_command_runs_on_the_example(monkeypatch, tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / EXAMPLE).write_bytes((ROOT / EXAMPLE).read_bytes())
    monkeypatch.chdir(tmp_path)  # the run's state folder (.localragas/) goes there, not into the checkout
    commands = _doc_commands()
    assert all(c == commands[0] for c in commands)  # the two pages give the same command
    r = cli(*commands[0], "--no-cache", "--no-resume", "--no-progress", catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert f"{EXAMPLE}: faithfulness (binary labels)" in r.output
    assert f"{EXAMPLE}: context_precision (binary labels)" in r.output
    assert "rows 14, scored 14, unscored 0" in r.output and "rows 6, scored 6, unscored 0" in r.output
