"""Persistent judge cache, resume after a kill, and token accounting (fast tier, fake judge)."""
from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from localragas import evaluate, load_samples
from localragas.run import judge_check
from localragas.run.checkpoint import Checkpoint, sample_hash
from localragas.judges import FakeJudge, Judging
from localragas.judges.cache import JudgeCache, cache_key
from localragas.core.reply_schemas import Claims, verdicts_for
from localragas.prompts import Prompt
from localragas.data.schema import Report

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"


def test_cache_hit_and_misses(tmp_path):
    judge = FakeJudge(replies=[{"claims": ["a."]}, {"claims": ["b."]}, {"claims": ["c."]}, {"claims": ["d."]}])
    judging = Judging(judge, cache=JudgeCache(tmp_path))
    p = Prompt("extract_claims", "text one")
    assert judging.generate(p, Claims).claims == ["a."]
    assert judging.generate(p, Claims).claims == ["a."]  # hit: the queue is not consumed
    assert (judging.stats.calls, judging.stats.cache_hits) == (1, 1)
    assert judging.generate(Prompt("extract_claims", "text two"), Claims).claims == ["b."]  # changed prompt
    judge.fingerprint = "fake:other-model"
    assert judging.generate(p, Claims).claims == ["c."]  # changed model or setting
    assert judging.generate(Prompt("extract_claims", "text one", system="other system"), Claims).claims == ["d."]
    assert (judging.stats.calls, judging.stats.cache_hits) == (4, 1)
    assert JudgeCache(tmp_path).info()["entries"] == 4


def test_cache_key_depends_on_schema():
    p = Prompt("verify_statements", "x")
    from localragas.core.reply_schemas import schema_text

    assert cache_key("f", schema_text(verdicts_for(2)), p) != cache_key("f", schema_text(verdicts_for(3)), p)


def test_failed_replies_are_not_cached(tmp_path):
    judging = Judging(FakeJudge(replies=["{not json", {"claims": ["ok."]}]), cache=JudgeCache(tmp_path))
    p = Prompt("extract_claims", "t")
    with pytest.raises(Exception):
        judging.generate(p, Claims)
    assert judging.generate(p, Claims).claims == ["ok."]
    assert judging.cache.info()["entries"] == 1


def _writer(folder: str, worker: int, n: int) -> None:
    cache = JudgeCache(folder)
    for i in range(n):
        cache.put(f"{worker}-{i}", "fake", "p", json.dumps({"claims": [str(i)]}), 1, 1, 0.0)
        assert cache.get(f"{worker}-{i}") is not None
    cache.close()


def test_concurrent_writers(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    info = JudgeCache(tmp_path).info()
    assert info["entries"] == 600
    assert (tmp_path / "judge-cache.sqlite3").is_file()


def test_repeated_run_makes_zero_judge_calls(tmp_path):
    samples, _ = load_samples(EXAMPLES)
    first = evaluate(samples, judge=FakeJudge(), embedder="fake", cache_dir=tmp_path)
    second = evaluate(samples, judge=FakeJudge(), embedder="fake", cache_dir=tmp_path)
    assert first.meta["judge_stats"]["calls"] > 0
    assert second.meta["judge_stats"]["calls"] == 0
    assert second.meta["judge_stats"]["cache_hits"] == first.meta["judge_stats"]["calls"]
    assert [s.metrics for s in first.samples] == [s.metrics for s in second.samples]


def test_token_accounting_per_sample_and_total():
    samples, _ = load_samples(EXAMPLES)
    report = evaluate(samples[:4], judge=FakeJudge(), embedder="fake")
    keys = {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens", "seconds"}
    for s in report.samples:
        assert keys <= set(s.judge)
        assert s.judge["calls"] == s.judge_calls > 0 and s.judge["prompt_tokens"] > 0
    totals = report.meta["judge_totals"]
    assert totals["prompt_tokens"] == sum(s.judge["prompt_tokens"] for s in report.samples)
    assert totals["calls"] == report.meta["judge_stats"]["calls"]
    assert 0.0 <= report.meta["share_of_wall_in_judge"] <= 1.0


def test_checkpoint_ignores_a_line_cut_by_a_kill(tmp_path):
    samples, _ = load_samples(EXAMPLES)
    report = evaluate(samples[:2], judge=FakeJudge(), embedder="fake")
    ck = Checkpoint(tmp_path / "run.jsonl")
    ck.append(sample_hash(samples[0]), report.samples[0])
    with open(ck.path, "a") as f:
        f.write('{"hash": "abc", "result": {"id": "cut')
    done = ck.load()
    assert list(done) == [samples[0].id]


def test_changed_sample_is_recomputed(tmp_path):
    samples, _ = load_samples(EXAMPLES)
    ck = tmp_path / "run.jsonl"
    evaluate(samples[:2], judge=FakeJudge(), embedder="fake", checkpoint=ck)
    changed = [samples[0].model_copy(update={"answer": "A different answer about storage tiers."}), samples[1]]
    judge = FakeJudge()
    report = evaluate(changed, judge=judge, embedder="fake", checkpoint=ck)
    assert report.meta["resumed_samples"] == 1
    assert all(samples[0].contexts[0][:30] in p.user for p in judge.asked("verify_statements"))


KILLED_RUN = """
import os, signal, sys
from localragas.judges import fake
real = fake.heuristic_reply
count = {"n": 0}
def reply_then_die(prompt, output):
    count["n"] += 1
    if count["n"] == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9 in the middle of a sample
    return real(prompt, output)
if int(sys.argv[1]):
    fake.heuristic_reply = reply_then_die
from localragas.cli import main
main(sys.argv[2:])
"""


def _cli(tmp_path, state: str, kill_at: int, out: Path, *more: str) -> subprocess.CompletedProcess:
    env = {"LOCALRAGAS_STATE_DIR": str(tmp_path / state), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    args = ["eval", str(EXAMPLES), "--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache",
            "--out", str(out), *more]
    return subprocess.run([sys.executable, "-c", KILLED_RUN, str(kill_at), *args], env=env, capture_output=True,
                          text=True, timeout=120)


# the judge check's calls, asked before any sample (run/judge_check.py: its statements and chunks, in English)
CHECK_CALLS = len(judge_check.STATEMENT_ORDER) + len(judge_check.CHUNK_ORDER)


def test_kill_9_then_rerun_loses_nothing_and_matches_an_uninterrupted_run(tmp_path):
    killed = _cli(tmp_path, "s", kill_at=CHECK_CALLS + 25, out=tmp_path / "never.json")
    assert killed.returncode == -9, killed.stderr
    runs = list((tmp_path / "s" / "runs").glob("*.jsonl"))
    assert len(runs) == 1
    finished = len(Checkpoint(runs[0]).load())
    assert 0 < finished < 16

    resumed = _cli(tmp_path, "s", kill_at=0, out=tmp_path / "resumed.json")
    assert resumed.returncode in (0, 1), resumed.stderr
    assert f"resumed: {finished} finished sample(s)" in resumed.stderr
    assert not runs[0].exists()  # removed once the run completed

    clean = _cli(tmp_path, "fresh", kill_at=0, out=tmp_path / "clean.json")
    a = Report.model_validate_json((tmp_path / "resumed.json").read_text())
    b = Report.model_validate_json((tmp_path / "clean.json").read_text())
    assert a.meta["resumed_samples"] == finished
    # the resumed run asked the judge only about the unfinished samples
    assert a.meta["judge_stats"]["calls"] < b.meta["judge_stats"]["calls"]
    assert a.meta["judge_totals"]["calls"] == b.meta["judge_totals"]["calls"]
    assert [(s.id, s.input, s.metrics) for s in a.samples] == [(s.id, s.input, s.metrics) for s in b.samples]
    assert all(s.input is not None for s in a.samples)  # the resumed samples' text as the scored ones'
    assert a.summary == b.summary and a.gate == b.gate
    assert clean.returncode == resumed.returncode


def test_a_run_without_sample_text_checkpoints_none_and_its_resumption_keeps_what_it_asks(tmp_path):
    killed = _cli(tmp_path, "s", CHECK_CALLS + 25, tmp_path / "never.json", "--no-sample-text")
    assert killed.returncode == -9, killed.stderr
    [checkpoint] = (tmp_path / "s" / "runs").glob("*.jsonl")
    questions = [json.loads(line)["question"] for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]
    text = checkpoint.read_text(encoding="utf-8")
    assert '"input"' not in text and not any(q in text for q in questions)  # no copy of the data on disk
    resumed = _cli(tmp_path, "s", 0, tmp_path / "resumed.json")  # resumed keeping the text: every sample has it
    assert "resumed:" in resumed.stderr, resumed.stderr
    a = Report.model_validate_json((tmp_path / "resumed.json").read_text())
    assert a.meta["sample_text"] is True and [s.input.question for s in a.samples] == questions


def test_embeddings_are_cached_so_a_rerun_never_embeds(tmp_path):
    from localragas.judges.embeddings import CachedEmbedder, HashingEmbedder

    class Counting(HashingEmbedder):
        texts = 0

        def embed(self, texts):
            Counting.texts += len(texts)
            return super().embed(texts)

    samples, _ = load_samples(EXAMPLES)
    a = evaluate(samples[:3], metrics=["answer_relevancy"], judge=FakeJudge(), embedder=Counting(), cache_dir=tmp_path)
    first = Counting.texts
    b = evaluate(samples[:3], metrics=["answer_relevancy"], judge=FakeJudge(), embedder=Counting(), cache_dir=tmp_path)
    assert first > 0 and Counting.texts == first
    assert [s.metrics for s in a.samples] == [s.metrics for s in b.samples]
    vecs = CachedEmbedder(HashingEmbedder(), JudgeCache(tmp_path)).embed(["x y", "z"])
    assert vecs.shape == (2, 512) and abs(float(vecs[0] @ vecs[0]) - 1.0) < 1e-5


def test_every_call_is_counted_by_prompt_with_its_tokens(tmp_path):
    samples, _ = load_samples(EXAMPLES)
    judge = FakeJudge()
    first = evaluate(samples[:1], judge=judge, embedder="fake", cache_dir=tmp_path)
    again = evaluate(samples[:1], judge=FakeJudge(), embedder="fake", cache_dir=tmp_path)
    by_prompt = first.samples[0].calls_by_prompt
    # graded verdicts: one call per sentence, chunk, claim; families in the order first asked (faithfulness judges
    # the answer's sentences; context recall, last, extracts the reference's claims)
    assert list(by_prompt) == list(dict.fromkeys(c.prompt.name for c in judge.calls)) == [
        "verify_statement", "generate_questions", "check_question", "judge_chunk", "extract_claims"]
    assert {p: row["calls"] for p, row in by_prompt.items()} == dict(Counter(c.prompt.name for c in judge.calls))
    assert all(row["cache_hits"] == 0 and row["prompt_tokens"] > 0 for row in by_prompt.values())
    assert sum(row["prompt_tokens"] for row in by_prompt.values()) == first.samples[0].judge["prompt_tokens"]
    hits = {p: (row["calls"], row["cache_hits"]) for p, row in again.samples[0].calls_by_prompt.items()}
    assert hits == {p: (0, row["calls"]) for p, row in by_prompt.items()}
