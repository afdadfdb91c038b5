"""docs/spot-checks.md's first review runs as written (the fake judge, the examples, a person's keys scripted), and the
plan it prints is the one `review --plan` prints for that run."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from cli_helpers import cli

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "spot-checks.md").read_text(encoding="utf-8")


def test_the_first_review_runs_as_written_and_its_plan_is_the_one_printed(tmp_path, monkeypatch):
    block = re.search(r"## A first review, in a minute\n.*?```bash\n(.*?)```", DOC, re.S).group(1)
    commands = [shlex.split(line.split("#")[0])[1:] for line in block.splitlines() if line.startswith("localragas ")]
    assert [c[0] for c in commands] == ["eval", "review", "report"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    made = cli(*commands[0], "--no-progress", "--no-history")
    assert made.exit_code in (0, 1), made.output
    reviewed = cli(*commands[1], "--reviewer", "newcomer", input="y\n" * 200)
    assert reviewed.exit_code == 0, reviewed.output
    total = int(re.search(r"as newcomer: (\d+) items", reviewed.output).group(1))
    assert f"all {total} items done" in reviewed.output
    labels = [json.loads(x) for x in (tmp_path / "run.labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(labels) == total and {x["reviewer"] for x in labels} == {"newcomer"}
    reported = cli(*commands[2])
    assert reported.exit_code in (0, 1), reported.output
    planned = cli("review", "run.json", "--plan")
    printed = re.search(r"`review run.json --plan` prints.*?```text\n(.*?)```", DOC, re.S).group(1)
    assert planned.exit_code == 0 and planned.output.startswith(printed), planned.output
