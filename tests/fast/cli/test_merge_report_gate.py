"""`merge` and `report` apply the gate to runs made with --no-gate (the sharded recipe of docs/scale-out.md), with
the thresholds, --gate-on and --max-error-rate the run recorded, under their own flags; --no-gate turns it off.
Exit codes as for eval: 0 passed, 1 failed, 4 could not evaluate."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from localragas.core.errors import JudgeError
from localragas.judges import fake

from cli_helpers import code_and_output as cli, write_jsonl

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


def no_gate_shards(folder: Path, data: Path = EXAMPLE, n: int = 2, *extra) -> list[Path]:
    """The documented recipe: every shard with --no-gate (a task's exit code means "it ran")."""
    shards = [folder / f"shard-{i}.json" for i in range(1, n + 1)]
    for i, p in enumerate(shards, 1):
        code, out = cli("eval", data, *FAST, *extra, "--shard", f"{i}/{n}", "--no-gate", "--out", p)
        assert code in (0, 4), out
    return shards


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> list[Path]:
    """The example's two --no-gate shards: with the fake judge and embedder, answer_relevancy is 0.325 against
    its default threshold 0.75 (the gate fails), the other three metrics pass theirs."""
    return no_gate_shards(tmp_path_factory.mktemp("shards"))


def test_merged_no_gate_shards_with_a_failing_threshold_exit_1(shards, tmp_path):
    merged, junit = tmp_path / "merged.json", tmp_path / "junit.xml"
    code, out = cli("merge", *shards, "--out", merged, "--junit", junit)
    assert code == 1, out
    assert "quality gate FAILED" in out and "answer_relevancy 0.325 < 0.75" in out
    gate = json.loads(merged.read_text())["gate"]
    assert gate["enabled"] is True and gate["passed"] is False
    failed = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert failed == ["answer_relevancy"]


def test_a_passing_merge_exits_0(shards):
    code, out = cli("merge", *shards, "-t", "answer_relevancy=0.3")
    assert code == 0 and "quality gate PASSED" in out, out


def test_merge_takes_gate_on_and_max_error_rate_as_eval_does(shards, tmp_path):
    code, out = cli("merge", *shards, "-t", "answer_relevancy=0.3", "--gate-on", "lower-bound")
    assert code == 1 and "answer_relevancy CI lower bound 0.226" in out, out  # 0.226-0.421: the mean passes
    merged = tmp_path / "m.json"
    cli("merge", *shards, "--max-error-rate", "0.1", "--out", merged)
    assert json.loads(merged.read_text())["gate"]["max_error_rate"] == 0.1
    code, out = cli("merge", *shards, "-t", "answer_correctness=0.5")
    assert code == 2 and "not in this report" in out


def test_no_gate_on_merge_turns_the_gate_off(shards, tmp_path):
    merged = tmp_path / "m.json"
    code, out = cli("merge", *shards, "--no-gate", "--out", merged)
    assert code == 0 and "quality gate: off" in out, out
    assert json.loads(merged.read_text())["gate"]["enabled"] is False


def test_report_gates_a_merged_or_no_gate_report(shards, tmp_path):
    merged = tmp_path / "m.json"
    assert cli("merge", *shards, "--no-gate", "--out", merged)[0] == 0  # stored with the gate off
    code, out = cli("report", merged, "-t", "faithfulness=0.5")
    assert code == 1 and "quality gate FAILED" in out and "answer_relevancy 0.325 < 0.75" in out, out
    code, out = cli("report", merged, "-t", "answer_relevancy=0.3")
    assert code == 0 and "quality gate PASSED" in out, out
    code, out = cli("report", merged, "--no-gate")
    assert code == 0 and "quality gate: off" in out, out
    code, out = cli("report", shards[0])  # one shard, as stored by eval --no-gate
    assert code == 1 and "quality gate FAILED" in out, out


def test_a_report_that_records_no_thresholds_is_gated_on_the_defaults(shards, tmp_path):
    data = json.loads(shards[0].read_text())
    del data["meta"]["thresholds"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    code, out = cli("report", old)
    assert code == 1 and "answer_relevancy" in out and "< 0.75" in out, out  # not an empty gate that passes


def test_merge_gates_with_the_thresholds_the_shards_took_from_localragas_toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localragas.toml").write_text("[thresholds]\nanswer_relevancy = 0.3\n")
    parts = no_gate_shards(tmp_path)
    code, out = cli("merge", *parts)
    assert code == 0 and "quality gate PASSED" in out, out
    code, out = cli("merge", *parts, "-t", "answer_relevancy=0.5")  # a flag over the recorded threshold
    assert code == 1 and "answer_relevancy 0.325 < 0.50" in out, out


def test_a_shard_with_errored_samples_gives_4(tmp_path, monkeypatch):
    real = fake.heuristic_reply
    monkeypatch.setattr(fake, "heuristic_reply", lambda prompt, output: JudgeError("server unreachable")
                        if "BROKEN" in prompt.user else real(prompt, output))
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()[:4]]
    rows[1]["answer"] += " BROKEN"  # in shard 2 of 2
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    parts = no_gate_shards(tmp_path, data, 2, "-m", "faithfulness", "-t", "faithfulness=0")
    code, out = cli("merge", *parts)
    assert code == 4 and "could not evaluate" in out, out
    code, out = cli("merge", *parts, "--no-gate")
    assert code == 4, out  # 4 holds with --no-gate
    assert cli("merge", *parts, "--max-error-rate", "0.25")[0] == 0
