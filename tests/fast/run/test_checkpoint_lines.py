"""A resume checkpoint survives any line: one nested too deeply, too long, damaged or of another format is discarded
with a warning naming the file and the line, its sample is judged again, and every other line is kept; of an id's lines
the last usable one decides, and its result is read back from it when the run takes it."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys


import localragas.run.checkpoint
from localragas import evaluate
from localragas.run import finished_index
from localragas.run.checkpoint import Checkpoint, sample_hash
from localragas.judges import FakeJudge
from localragas.data.schema import Report, Sample

from cli_helpers import cli

AGAIN = "the line is discarded and its sample will be judged again"
DEEP = "[" * 200_000 + "]" * 200_000


def samples() -> list[Sample]:
    return [Sample(id=f"s{i}", question=f"What colour is item {i}?", contexts=[f"Item {i} is red."],
                   answer=f"Item {i} is red.", reference=f"Item {i} is red.") for i in range(2)]


def lines_of(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_a_line_nested_200k_deep_is_discarded_with_a_warning_and_its_sample_judged_again(tmp_path, caplog):
    ck = tmp_path / "run.jsonl"
    evaluate(samples(), judge=FakeJudge(), embedder="fake", checkpoint=ck, cache=False)  # judged again below
    first, second = lines_of(ck)
    assert json.loads(first)["result"]["id"] == "s0"
    ck.write_text(DEEP + "\n" + second + "\n", encoding="utf-8")
    judge = FakeJudge()
    with caplog.at_level(logging.WARNING, logger="localragas"):
        report = evaluate(samples(), judge=judge, embedder="fake", checkpoint=ck, cache=False)
    assert report.meta["resumed_samples"] == 1
    claims = [p.user for p in judge.asked("extract_claims")]
    assert claims and all("item 0" in c.lower() and "item 1" not in c.lower() for c in claims)  # only s0 again
    assert f"resume checkpoint {ck}, line 1: nested too deeply; {AGAIN}" in caplog.messages
    assert json.loads(lines_of(ck)[-1])["result"]["id"] == "s0"  # judged again and checkpointed


def test_an_over_long_line_is_skipped_without_being_parsed(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(localragas.run.checkpoint, "MAX_LINE_BYTES", 4096)
    ck = tmp_path / "run.jsonl"
    report = evaluate(samples(), judge=FakeJudge(), embedder="fake", checkpoint=ck)
    first, second = lines_of(ck)
    long = json.dumps({**json.loads(first), "padding": "x" * 20_000})  # a usable result, were it read
    ck.write_text(long + "\n" + second + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="localragas"):
        done = Checkpoint(ck).load()
    assert list(done) == ["s1"] and done["s1"][1] == report.samples[1]
    assert caplog.messages == [f"resume checkpoint {ck}, line 1: longer than 4,096 bytes; {AGAIN}"]


def test_every_kind_of_bad_line_is_discarded_and_counted_once_past_five(tmp_path, caplog):
    ck = Checkpoint(tmp_path / "run.jsonl")
    report = evaluate(samples()[:1], judge=FakeJudge(), embedder="fake")
    good = json.dumps({"hash": sample_hash(samples()[0]), "result": report.samples[0].model_dump(mode="json")})
    bad = [b"\xff\xfe not json", b"[1, 2]", b'{"hash": "h"}', b'{"hash": "h", "result": {"id": 3}}', b"9" * 5000,
           DEEP.encode(), b'{"hash": "h", "result": ' + DEEP.encode() + b"}", b"{\"hash\": \"cut"]
    ck.path.write_bytes(b"\n".join([*bad[:-1], b"", good.encode(), bad[-1]]))
    with caplog.at_level(logging.WARNING, logger="localragas"):
        done = ck.load()
    assert list(done) == ["s0"]
    assert caplog.messages == [
        f"resume checkpoint {ck.path}, line 1: not valid JSON (cut short by a kill, or damaged); {AGAIN}",
        f"resume checkpoint {ck.path}, line 2: not a sample result of this version; {AGAIN}",
        f"resume checkpoint {ck.path}, line 3: not a sample result of this version; {AGAIN}",
        f"resume checkpoint {ck.path}, line 4: not a sample result of this version; {AGAIN}",
        f"resume checkpoint {ck.path}, line 5: not valid JSON (cut short by a kill, or damaged); {AGAIN}",
        f"resume checkpoint {ck.path}: 3 more lines discarded (lines 6 to 10); their samples will be judged again",
    ]


def test_a_result_appended_after_a_line_cut_by_a_kill_starts_a_line_of_its_own(tmp_path):
    ck = tmp_path / "run.jsonl"
    ck.write_text('{"hash": "abc", "result": {"id": "cut', encoding="utf-8")  # killed mid-write
    evaluate(samples(), judge=FakeJudge(), embedder="fake", checkpoint=ck)
    assert sorted(Checkpoint(ck).load()) == ["s0", "s1"]  # before: s0 ended the cut line and was lost again
    assert lines_of(ck)[0] == '{"hash": "abc", "result": {"id": "cut'


def test_a_resumed_cli_run_prints_the_warning_keeps_the_good_sample_and_judges_the_other(tmp_path, data,
                                                                                        monkeypatch):
    state = tmp_path / "state"
    args = ["eval", str(data), "--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate", "--no-cache"]
    monkeypatch.setattr(Checkpoint, "remove", lambda self: None)  # keep the checkpoint of a finished run
    assert cli(*args, LOCALRAGAS_STATE_DIR=str(state)).exit_code == 0
    [ck] = (state / "runs").glob("*.jsonl")
    first, second = lines_of(ck)
    ck.write_text(DEEP + "\n" + second + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCALRAGAS_STATE_DIR": str(state)}
    done = subprocess.run([sys.executable, "-c", "from localragas.cli import main; main()", *args, "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"resume checkpoint {ck}, line 1: nested too deeply; {AGAIN}\n" in done.stderr
    assert f"resumed: 1 finished sample(s) taken from {ck}" in done.stderr
    report = Report.model_validate_json(out.read_text(encoding="utf-8"))
    assert report.meta["resumed_samples"] == 1 and [s.id for s in report.samples] == ["s0", "s1"]
    assert report.meta["judge_stats"]["calls"] == report.samples[0].judge_calls > 0  # s0 judged again, s1 not
    assert not ck.exists()


def test_the_last_usable_line_of_an_id_decides_and_its_result_is_read_back_from_it(tmp_path):
    report = evaluate(samples(), judge=FakeJudge(), embedder="fake", cache=False)
    r0, r1 = report.samples
    later = r1.model_copy(update={"category": "later"})
    h0, h1 = (sample_hash(s) for s in samples())
    ck = Checkpoint(tmp_path / "run.jsonl")
    ck.append(h0, r0)
    ck.append(h1, r1)
    ck.append("the hash of s0 as it was changed", r0)  # s0 resumed with other content, then changed back
    ck.append(h1, later)  # s1 finished twice: the last line is the one taken
    with open(ck.path, "ab") as f:
        f.write(b'{"hash": "' + h1.encode() + b'", "result": {"id": "s1", "cut')  # then killed mid-line
    with ck.finished() as done:
        assert len(done) == 2 and done.index.offsets.nbytes == 16  # 24 bytes a finished sample, no result
        assert done.take("s0", h0) is None and done.take("s0", "the hash of s0 as it was changed") == r0
        assert done.take("s1", h1) == later and done.take("s1", h0) is None and done.take("s2", h1) is None
    assert {k: v[1].category for k, v in ck.load().items()} == {"s0": r0.category, "s1": "later"}
    judge = FakeJudge()
    again = evaluate(samples(), judge=judge, embedder="fake", cache=False, checkpoint=ck)
    assert again.meta["resumed_samples"] == 1 and again.samples[1] == later and again.samples[0].metrics == r0.metrics
    asked = [p.user.lower() for p in judge.asked("extract_claims")]
    assert asked and all("item 0" in p for p in asked)  # only s0 judged again


def test_ids_or_hashes_sharing_a_digest_cost_a_sample_judged_again_never_a_wrong_result(tmp_path, monkeypatch):
    monkeypatch.setattr(finished_index, "digest64", lambda text: 7)  # every id and hash the same digest
    ck = tmp_path / "run.jsonl"
    first = evaluate(samples(), judge=FakeJudge(), embedder="fake", checkpoint=ck, cache=False)
    ck.write_text("".join(json.dumps({"hash": sample_hash(s), "result": r.model_dump(mode="json")}) + "\n"
                          for s, r in zip(samples(), first.samples)), encoding="utf-8")
    judge = FakeJudge()
    again = evaluate(samples(), judge=judge, embedder="fake", checkpoint=ck, cache=False)
    assert again.meta["resumed_samples"] == 1 and again.samples[1] == first.samples[1]  # s1's line: the last one
    assert again.samples[0].id == "s0" and again.samples[0].metrics == first.samples[0].metrics
    asked = [p.user.lower() for p in judge.asked("extract_claims")]
    assert asked and all("item 0" in p for p in asked)  # s0 judged again, not given s1's result
