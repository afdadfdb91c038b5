"""`eval --shard i/n` and `localragas merge`: shards joined equal the unsharded run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localragas.core.errors import ConfigError
from localragas.run.shard_spec import parse_shard, shard_positions

from cli_helpers import code_and_output as run

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


@pytest.mark.parametrize("text, expected", [("1/2", (1, 2)), (" 3 / 4 ", (3, 4)), ("1/1", (1, 1))])
def test_parse_shard(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "a/b", "1-2", ""])
def test_parse_shard_rejects(text):
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def test_shards_cover_every_position_once_and_are_balanced():
    for total in (0, 1, 7, 16):
        for n in (1, 2, 3, 5):
            parts = [shard_positions(total, i, n) for i in range(1, n + 1)]
            assert sorted(p for part in parts for p in part) == list(range(total))
            assert max(map(len, parts)) - min(map(len, parts)) <= 1


def comparable(report: dict) -> dict:
    """What must be equal between merged and unsharded: results, aggregates, intervals, gate (not timings)."""
    samples = [{"id": s["id"], "category": s["category"], "metrics": s["metrics"]} for s in report["samples"]]
    return {"metrics": report["metrics"], "summary": report["summary"], "by_category": report["by_category"],
            "gate": report["gate"], "samples": samples, "skipped": report["skipped"]}


def test_two_shards_merged_equal_the_unsharded_report(tmp_path):
    whole, a, b, merged = (tmp_path / f"{n}.json" for n in ("whole", "a", "b", "merged"))
    code_whole, _ = run("eval", EXAMPLE, *FAST, "--out", whole)
    run("eval", EXAMPLE, *FAST, "--shard", "2/2", "--out", b)
    run("eval", EXAMPLE, *FAST, "--shard", "1/2", "--out", a)
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ra["meta"]["shard"]["positions"] == list(range(0, 16, 2)) and len(rb["samples"]) == 8
    code, out = run("merge", b, a, "--out", merged, "--md", tmp_path / "m.md")  # any order
    assert code == code_whole, out
    w, m = json.loads(whole.read_text()), json.loads(merged.read_text())
    assert comparable(m) == comparable(w)
    assert m["meta"]["samples"] == 16 and [x["shard"] for x in m["meta"]["merged_from"]] == ["1/2", "2/2"]
    assert m["meta"]["judge_stats"]["calls"] == w["meta"]["judge_stats"]["calls"]
    assert (tmp_path / "m.md").read_text().startswith("### localragas:")


def test_merge_refuses_mismatched_missing_or_repeated_shards(tmp_path):
    a, b, c, other = (tmp_path / f"{n}.json" for n in ("a", "b", "c", "other"))
    run("eval", EXAMPLE, *FAST, "--shard", "1/3", "--out", a)
    run("eval", EXAMPLE, *FAST, "--shard", "2/3", "--out", b)
    run("eval", EXAMPLE, *FAST, "--shard", "3/3", "-m", "faithfulness", "--out", c)
    code, out = run("merge", a, b)
    assert code == 2 and "missing 3" in out
    code, out = run("merge", a, a, b)
    assert code == 2 and "given twice 1" in out
    code, out = run("merge", a, b, c)
    assert code == 2 and "differ in metrics" in out
    run("eval", EXAMPLE, *FAST, "--out", other)
    code, out = run("merge", a, other)
    assert code == 2 and "not made with --shard" in out


def test_shard_larger_than_the_dataset_gives_an_empty_shard_that_merges(tmp_path):
    data = tmp_path / "two.jsonl"
    data.write_text("\n".join(EXAMPLE.read_text().splitlines()[:2]) + "\n")
    parts = [tmp_path / f"s{i}.json" for i in (1, 2, 3)]
    for i, p in enumerate(parts, 1):
        run("eval", data, *FAST, "--shard", f"{i}/3", "--no-gate", "--out", p)
    assert json.loads(parts[2].read_text())["samples"] == []
    code, out = run("merge", *parts, "--out", tmp_path / "m.json", "--no-gate")  # merge gates --no-gate shards
    assert code == 0 and len(json.loads((tmp_path / "m.json").read_text())["samples"]) == 2


def test_shard_checkpoints_are_separate(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    args = ["eval", EXAMPLE, "--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate"]
    run(*args, "--shard", "1/2", "--out", a)
    run(*args, "--shard", "2/2", "--out", b)
    ids_a = {s["id"] for s in json.loads(a.read_text())["samples"]}
    ids_b = {s["id"] for s in json.loads(b.read_text())["samples"]}
    assert ids_a and ids_b and not ids_a & ids_b
