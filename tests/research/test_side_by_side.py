"""research.benchmarks.side_by_side: the same eval with two exports of the package, one after the other, and the
before/after tables of docs/speed.md; the fake judge only (HEAD against the working tree: the same scores)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from research.benchmarks.side_by_side import ROOT, Refused, Side, absolute, check_import, child_env, main

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs git and the checkout's history")
FAKE = ["--", "--judge", "fake", "--embedder", "fake", "--limit", "3"]


@pytest.fixture
def data(tmp_path) -> Path:
    rows = (ROOT / "examples/rag_samples.jsonl").read_text().splitlines()[:4]
    path = tmp_path / "four.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_head_against_the_working_tree_gives_the_table_and_the_same_scores(tmp_path, data, capsys):
    out = tmp_path / "sbs"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    code = main(["--before", "HEAD", "--after", "WORKTREE", "--data", str(data), "--out-dir", str(out),
                 "--own-tokens", *FAKE])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    table = printed.out
    assert (out / "side_by_side.md").read_text() == table
    assert f"| | `{head}` | `working tree` | ratio |" in table
    for row in ("process wall time", "report wall (meta.wall_seconds)", "inside the judge",
                "judge calls (samples; the judge check; the canaries)", "prompt tokens sent",
                "of which reused (cached)", "evaluated (sent − reused)", "generated tokens",
                "evaluated prompt tokens per sample (the samples' calls)"):
        assert f"\n| {row} | " in table, row
    assert "| family | calls | evaluated prompt tokens | generated tokens | seconds |" in table
    assert "\n| verify_statement | " in table and "\n| (judge check) | " in table and "\n| (canaries) | " in table
    assert "Scores: 0 of the 12 sample x metric values differ" in table
    assert "own tokens: skipped, the judge 'fake' is not a llama.cpp GGUF" in table
    # one after the other, each from its own export and state folder
    assert printed.err.index("before (") < printed.err.index("after (working tree), run 1")
    doc = json.loads((out / "side_by_side.json").read_text())
    assert doc["scores"]["differ"] == 0 and doc["before"]["label"] == head
    for side in ("before", "after"):
        fig = doc[side]["figures"]
        assert fig["samples"] == 3 and fig["calls"]["samples"] > 0 and len(fig["process_walls"]) == 1
        assert doc[side]["reports"] == [str(out / side / "report.json")]
        assert (out / side / "src/localragas/__init__.py").is_file() and (out / side / "state").is_dir()
    assert doc["before"]["figures"]["prompt_tokens"] == doc["after"]["figures"]["prompt_tokens"]


def test_a_failed_eval_stops_it_naming_the_side_the_code_and_the_end_of_stderr(tmp_path, data, capsys):
    code = main(["--before", "WORKTREE", "--after", "WORKTREE", "--data", str(data), "--out-dir", str(tmp_path),
                 "--", "--no-such-flag"])
    err = capsys.readouterr().err
    assert code == 1
    assert "side_by_side: before (WORKTREE), run 1: eval exited 2" in err and "--no-such-flag" in err
    assert not (tmp_path / "after" / "report.json").exists() and not (tmp_path / "side_by_side.md").exists()


def test_an_unknown_revision_is_refused_before_any_run(tmp_path, data, capsys):
    code = main(["--before", "no-such-rev-xyz", "--after", "WORKTREE", "--data", str(data), "--out-dir",
                 str(tmp_path)])
    assert code == 2 and "--before no-such-rev-xyz: not a commit" in capsys.readouterr().err
    assert not (tmp_path / "before").exists()


def test_a_package_imported_from_elsewhere_is_refused(tmp_path):
    side = Side("before", "HEAD", "HEAD", tmp_path / "before")
    side.src.mkdir(parents=True)  # no localragas in it: the import finds another one, or none
    side.state.mkdir()
    side.env = child_env(side.src, tmp_path)
    with pytest.raises(Refused, match="not from its export"):
        check_import(side)


def test_file_arguments_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thresholds.toml").write_text("")
    assert absolute(["--config", "thresholds.toml", "--prompt=thresholds.toml", "--judge", "fake", "-m", "x"]) == [
        "--config", str(tmp_path / "thresholds.toml"), f"--prompt={tmp_path / 'thresholds.toml'}", "--judge", "fake",
        "-m", "x"]
