"""scripts/setup.sh's first evaluation: a first look at 3 of the examples, then the command for all of them. Both
commands are run here as the script writes them, with the fake judge and embedder (the real judge is the real
tier's business): they parse, write what they say, and the full run reuses the first run's judge replies."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from cli_helpers import cli

ROOT = Path(__file__).resolve().parents[3]
SETUP = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
FAKE = ["--judge", "fake", "--embedder", "fake", "--no-progress"]


def commands() -> list[list[str]]:
    """Every `.venv/bin/localragas eval …` line of setup.sh (the first run, then the printed next command)."""
    lines = re.findall(r"^\s*\.venv/bin/localragas (eval .*)$", SETUP, flags=re.M)
    return [shlex.split(line) for line in lines]


def test_the_first_run_is_3_samples_and_the_full_run_is_printed_after_it():
    first, full = commands()
    assert first[first.index("--limit") + 1] == "3"
    assert "--limit" not in full and full[1] == first[1] == "examples/rag_samples.jsonl"
    assert SETUP.index(shlex.join(first)) < SETUP.index("<<'NEXT'") < SETUP.index(shlex.join(full))
    assert 'SETUP_SKIP_EVAL:-0}" = 1' in SETUP[:SETUP.index(shlex.join(first))]


def test_both_commands_run_with_the_fake_judge(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    first, full = commands()
    r = cli(*first + FAKE + ["--out", "first.json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output  # setup.sh goes on after 0 or 1 and stops on 2 or more
    html = first[first.index("--html") + 1]
    assert (tmp_path / html).is_file()
    assert len(json.loads((tmp_path / "first.json").read_text())["samples"]) == 3
    calls_first = json.loads((tmp_path / "first.json").read_text())["meta"]["judge_totals"]["calls"]

    r = cli(*full + FAKE + ["--out", "full.json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    report = json.loads((tmp_path / "full.json").read_text())
    assert len(report["samples"]) == 16
    assert report["meta"]["judge_totals"]["cache_hits"] == calls_first  # "the 3 above come from the cache"
    assert (tmp_path / full[full.index("--html") + 1]).is_file()
