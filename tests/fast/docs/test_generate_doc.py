"""docs/generate.md's loop runs as written: its three commands, in a copy of examples/, with the fake judge."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from cli_helpers import cli

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "generate.md").read_text(encoding="utf-8")


def test_the_documented_loop_runs_as_written(tmp_path, monkeypatch):
    block = re.search(r"## The whole loop, as tested\n.*?```bash\n(.*?)```", DOC, re.S).group(1)
    commands = [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("localragas ")]
    assert [c[0] for c in commands] == ["generate", "run-rag", "eval"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    codes = [cli(*c, "--no-progress") for c in commands]
    assert [r.exit_code for r in codes[:2]] == [0, 0], [r.output for r in codes]
    assert codes[2].exit_code in (0, 1), codes[2].output
    printed = re.search(r"```text\n(.*?)```", DOC, re.S).group(1)
    assert codes[0].output == printed  # the counts shown in the page are the ones printed
    assert "run-rag: 20 of 20 rows answered; wrote filled.jsonl" in codes[1].output
    rows = [json.loads(line) for line in (tmp_path / "filled.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and all(r["answer"] for r in rows)
