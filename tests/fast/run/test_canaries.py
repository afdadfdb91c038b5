"""Canaries (run/canaries.py): obvious items of each checked family, asked during the run at points drawn for it, the
same way as the run's items; a run whose canaries the judge answered no better than a coin cannot pass (exit 4,
each metric of the family could not be evaluated), whatever the judge check said before.

The judges are the stub OpenAI-compatible server (stub_server.py GradedJudge: one right on the check's items and blind
to the rest, one that reads everything) and the fake judge."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localragas.core.reply_schemas import YesNo
from localragas.data.schema import Gate, Report, Sample
from localragas.judges import FakeJudge
from localragas.judges.fake import heuristic_reply
from localragas.run import canaries, judge_check
from localragas.run.runner import evaluate

from cli_helpers import cli, write_jsonl
from stub_server import CHECK_MARKS, GradedJudge, check_then, separating

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"
MARK = "Zanzibar"  # in every sample's context: a request that holds it asks about a sample
BRIDGE = re.compile(r"\b[Tt]he (\w+) Bridge")  # every English canary names its bridge so
METRICS = ("-m", "faithfulness,context_precision,context_recall", "--metric-option",
           "context_recall.statements=sentences")
PER_SIDE = canaries.PER_GROUP // 2


def scores(report: dict) -> list:
    """Each sample's id and metric results (not its seconds)."""
    return [(s["id"], s["metrics"]) for s in report["samples"]]


def rows(n: int, mark: str = MARK) -> list[dict]:
    """n samples whose answer and reference the context states (every metric here scores them high)."""
    return [{"id": f"s{i}", "question": f"Where is the spice market {i}?",
             "contexts": [f"The spice market {i} is in {mark} old town, near the harbour."],
             "answer": f"The spice market {i} is in {mark} old town.",
             "reference": f"The spice market {i} is in {mark} old town near the harbour."} for i in range(n)]


@pytest.fixture
def serve():
    stubs: list[GradedJudge] = []

    def start(policy) -> GradedJudge:
        stubs.append(GradedJudge(policy))
        return stubs[-1]

    yield start
    for s in stubs:
        s.close()


def openai(stub: GradedJudge) -> tuple[str, ...]:
    return ("--judge", "openai:stub", "--judge-option", f"base_url={stub.url}", "--judge-option", "retries=0")


def kinds(stub: GradedJudge) -> list[str]:
    """Each request, in order: S a sample's, C a canary's, K the judge check's."""
    return ["S" if MARK in u else "K" if any(m in u for m in CHECK_MARKS) else "C" if BRIDGE.search(u) else "?"
            for u in stub.asked]


def test_a_judge_right_on_the_check_then_yes_to_everything_cannot_pass_exit_4(serve, tmp_path):
    """It passes the check (it reads the check's items), then says yes to all: every sample scores high and the gate
    would pass. Its canaries, half of them unsupported, come out half wrong: no better than a coin."""
    stub = serve(check_then(0.99))
    data = write_jsonl(tmp_path / "d.jsonl", rows(6))
    out, md, junit = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.xml"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--out", out, "--md", md,
            "--junit", junit)
    assert r.exit_code == 4, r.output
    text = " ".join(r.output.split())
    assert "judge check passed" in text
    assert (f"canaries FAILED: the judge got {PER_SIDE * 2} of {canaries.PER_GROUP * 2} obvious items asked during the "
            f"run wrong, no better than a coin (statements {PER_SIDE}/{canaries.PER_GROUP}, chunks "
            f"{PER_SIDE}/{canaries.PER_GROUP} right)") in text
    for metric in ("faithfulness", "context_precision", "context_recall"):
        assert f"{metric}: could not evaluate: the judge got {PER_SIDE} of {canaries.PER_GROUP} canaries wrong" in text
    assert "no better than a coin" in text and "docs/gate.md#canaries" in text
    report = json.loads(out.read_text())
    c = report["meta"]["canaries"]
    assert c["status"] == "failed" and c["asked"] == 2 * canaries.PER_GROUP and c["wrong"] == 2 * PER_SIDE
    assert [(g["family"], g["metrics"], g["right"], g["passed"]) for g in c["groups"]] == [
        ("verify_statement", ["faithfulness", "context_recall"], PER_SIDE, False),
        ("judge_chunk", ["context_precision"], PER_SIDE, False)]
    assert all(w["expected"] in ("unsupported", "irrelevant") for g in c["groups"] for w in g["wrong_items"])
    assert not report["gate"]["passed"] and not report["gate"]["evaluated"]
    assert all(s["metrics"]["faithfulness"]["value"] > 0.9 for s in report["samples"])  # the scores alone would pass
    assert "canaries FAILED" in md.read_text()
    xml = junit.read_text()
    assert xml.count('type="CouldNotEvaluate"') == 3 and 'name="canaries" value="canaries FAILED' in xml
    # the stored report gated again says the same: `report` exits 4, --max-error-rate does not accept it
    assert cli("report", out, "--max-error-rate", "1").exit_code == 4


def test_a_judge_that_reads_passes_and_its_canaries_are_asked_during_the_run_where_drawn(serve, tmp_path):
    stub = serve(separating)
    n = 12
    data = write_jsonl(tmp_path / "d.jsonl", rows(n))
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--concurrency", "1", "--out", out)
    assert r.exit_code == 0, r.output
    c = json.loads(out.read_text())["meta"]["canaries"]
    assert c["status"] == "passed" and c["asked"] == c["answered"] == 2 * canaries.PER_GROUP and c["wrong"] == 0
    assert (f"canaries passed: the judge got {2 * canaries.PER_GROUP} of {2 * canaries.PER_GROUP} obvious items asked "
            f"during the run right (statements {canaries.PER_GROUP}/{canaries.PER_GROUP}, chunks "
            f"{canaries.PER_GROUP}/{canaries.PER_GROUP} right)") in " ".join(r.output.split())
    # in the stream of requests: the check first, then the samples' with the canaries' among them, each task of a
    # group after as many samples as its slot says (one thread: in order)
    seen = "".join(kinds(stub))
    assert "?" not in seen and seen.startswith("K" * len(judge_check.STATEMENT_ORDER + judge_check.CHUNK_ORDER))
    per_sample = seen.count("S") // n
    calls_per_task = canaries.PER_TASK  # graded: one call an item
    tasks = [m.start() for m in re.finditer("C" * calls_per_task, seen.lstrip("K"))]
    before = sorted(seen.lstrip("K")[:t].count("S") // per_sample for t in tasks)
    assert before == sorted(slot for g in c["groups"] for slot in g["slots"])
    assert 0 < sum(1 for b in before if 0 < b < n)  # not all before or after the samples
    assert len({b for b in before}) > 2  # at several points
    # what they cost, as docs/gate.md#canaries says: an English run of these metrics asks 16 graded calls
    assert seen.count("C") == c["calls"] == 2 * canaries.PER_GROUP
    gate_doc = " ".join((ROOT / "docs" / "gate.md").read_text().split())
    assert (f"An English run of faithfulness, context recall and context precision asks **{seen.count('C')} graded "
            "calls**") in gate_doc


def test_canaries_never_show_as_samples_nor_change_a_score_or_a_mean(tmp_path):
    """The fake judge (it reads) on the examples: the same samples, scores, means and gate as a run without canaries
    (--no-judge-check asks none); the canaries' calls in meta.canaries, not in judge_stats."""
    out, bare = tmp_path / "r.json", tmp_path / "bare.json"
    args = ("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume")
    r = cli(*args, "--out", out)
    assert r.exit_code in (0, 1), r.output
    assert cli(*args, "--no-judge-check", "--out", bare).exit_code == r.exit_code
    with_them, without = json.loads(out.read_text()), json.loads(bare.read_text())
    c = with_them["meta"]["canaries"]
    assert c["status"] == "passed" and c["wrong"] == 0 and c["calls"] == 2 * canaries.PER_GROUP
    assert without["meta"]["canaries"] == {"status": "skipped", "reason": "--no-judge-check"}
    assert scores(with_them) == scores(without)
    assert with_them["summary"] == without["summary"] and with_them["gate"] == without["gate"]
    assert with_them["meta"]["samples"] == len(with_them["samples"]) == len(EXAMPLES.read_text().splitlines())
    assert not any("canary" in s["id"] for s in with_them["samples"])
    stats, totals = with_them["meta"]["judge_stats"], with_them["meta"]["judge_totals"]
    assert stats["calls"] == totals["calls"] == sum(s["judge_calls"] for s in with_them["samples"])


def test_the_same_run_draws_the_same_canaries_and_other_data_draws_others(tmp_path):
    def run(name: str, data: Path, *more) -> dict:
        out = tmp_path / f"{name}.json"
        r = cli("eval", data, *METRICS, "--judge", "fake", "--no-resume", "--out", out, *more)
        assert r.exit_code == 0, r.output
        return json.loads(out.read_text())

    def drawn(report: dict) -> list:
        return report["meta"]["canaries"]["groups"]

    data = write_jsonl(tmp_path / "d.jsonl", rows(8))
    one, two = run("1", data, "--no-cache"), run("2", data, "--no-cache")
    assert drawn(one) == drawn(two) and scores(one) == scores(two)
    # with the judge cache: the second run finds its canaries there (the same prompts), as it finds the samples'
    cache = ("--cache-dir", tmp_path / "cache")
    first, again = run("3", data, *cache), run("4", data, *cache)
    assert first["meta"]["canaries"]["calls"] == 2 * canaries.PER_GROUP
    assert again["meta"]["canaries"]["calls"] == 0 and again["meta"]["canaries"]["cache_hits"] == 2 * canaries.PER_GROUP
    assert drawn(again) == drawn(first) == drawn(one)
    # other data: other canaries (another bridge), which the cache cannot answer from the first run
    other = run("5", write_jsonl(tmp_path / "e.jsonl", rows(8, mark="Mombasa")), *cache)
    assert other["meta"]["canaries"]["calls"] == 2 * canaries.PER_GROUP
    assert [g["slots"] for g in drawn(other)] != [g["slots"] for g in drawn(first)]


def test_no_judge_check_skips_the_canaries_and_every_report_says_so(serve, tmp_path):
    stub = serve(separating)
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--no-judge-check", "--out", out,
            "--md", md)
    assert r.exit_code == 0, r.output
    assert set(kinds(stub)) == {"S"}  # neither the check nor a canary asked
    assert "canaries skipped (--no-judge-check)" in r.output and "canaries skipped (--no-judge-check)" in md.read_text()
    assert json.loads(out.read_text())["meta"]["canaries"] == {"status": "skipped", "reason": "--no-judge-check"}


def test_json_verdicts_canaries_are_asked_a_task_a_call_and_catch_a_yes_machine():
    en = [Sample(id=f"e{i}", question="Where?", contexts=[f"The market {i} is in Paris."],
                 answer=f"The market {i} is in Paris.") for i in range(4)]
    options = {"faithfulness": {"verdicts": "json"}}
    judge = FakeJudge(checked=True)
    report = evaluate(en, metrics=["faithfulness"], judge=judge, cache=False, metric_options=options)
    c = report.meta["canaries"]
    assert c["status"] == "passed" and c["calls"] == canaries.PER_GROUP // canaries.PER_TASK  # one JSON call a task
    asked = [call.prompt for call in judge.calls if BRIDGE.search(call.prompt.user)]
    assert {p.name for p in asked} == {"verify_statements"}
    assert all(p.user.count("<statement") == canaries.PER_TASK for p in asked)

    def check_then_yes(prompt, output):
        if prompt.name == "verify_statements" and "Eiffel" not in prompt.user:
            n = prompt.user.count("<statement")
            return {"verdicts": [{"id": i, "verdict": "yes"} for i in range(1, n + 1)]}
        return heuristic_reply(prompt, output)

    yes = evaluate(en, metrics=["faithfulness"], judge=FakeJudge(responder=check_then_yes, checked=True),
                   cache=False, metric_options=options)
    assert yes.meta["judge_check"]["status"] == "passed" and yes.meta["canaries"]["status"] == "failed"
    assert not yes.gate.evaluated and "canaries wrong" in yes.gate.errors[0].message


def test_a_graded_yes_machine_after_the_check_fails_in_python_too():
    en = [Sample(id=f"e{i}", question="Where?", contexts=[f"The market {i} is in Paris."],
                 answer=f"The market {i} is in Paris.") for i in range(4)]

    def check_then_yes(prompt, output):
        if output is YesNo and not any(m in prompt.user for m in CHECK_MARKS):
            return {"p_yes": 0.99, "mass": 1.0}
        return heuristic_reply(prompt, output)

    report = evaluate(en, metrics=["faithfulness"], judge=FakeJudge(responder=check_then_yes, checked=True),
                      cache=False)
    assert report.meta["judge_check"]["status"] == "passed"
    assert report.meta["canaries"]["status"] == "failed" and report.gate.passed is False
    assert [e.metric for e in report.gate.errors] == ["faithfulness"]


def test_the_rule_needs_7_of_8_and_merge_keeps_each_shards_verdict():
    assert canaries.least_right() == 7 and canaries.p_value(7, 8) <= canaries.ALPHA < canaries.p_value(6, 8)
    assert canaries.p_value(0, 0) == 1.0  # none answered: it cannot show the judge was judging

    def shard_meta(passed: bool) -> dict:
        group = {"kind": "statements", "family": "verify_statement", "label": "statements", "language": "en",
                 "metrics": ["faithfulness"], "asked": 8, "answered": 8, "right": 8 if passed else 4,
                 "wrong": 0 if passed else 4, "passed": passed, "wrong_items": [] if passed else
                 [{"item": "x", "expected": "unsupported", "value": 0.99}]}
        return {"status": "passed" if passed else "failed", "asked": 8, "answered": 8, "wrong": group["wrong"],
                "groups": [group], "calls": 8, "cache_hits": 0}

    merged = canaries.merged([shard_meta(True), shard_meta(False)], ["1/2", "2/2"])
    assert merged["status"] == "failed" and merged["asked"] == 16 and merged["wrong"] == 4 and merged["calls"] == 16
    assert [g["shard"] for g in merged["groups"]] == ["1/2", "2/2"]
    report = Report(meta={"canaries": merged}, metrics=["faithfulness"], gate=Gate(enabled=True, passed=True))
    assert "shard 2/2" in canaries.failures(report)["faithfulness"]
    assert canaries.merged([{"status": "skipped", "reason": "--no-judge-check"}] * 2, ["1/2", "2/2"]) == \
        {"status": "skipped", "reason": "--no-judge-check"}


def test_shards_each_ask_their_canaries_and_a_failed_shard_fails_the_merge(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rows(6))
    outs = []
    for i in (1, 2):
        outs.append(tmp_path / f"s{i}.json")
        r = cli("eval", data, *METRICS, "--judge", "fake", "--no-cache", "--no-resume", "--shard", f"{i}/2", "--out",
                outs[-1])
        assert r.exit_code == 0, r.output
    merged = tmp_path / "m.json"
    assert cli("merge", *outs, "--out", merged).exit_code == 0
    c = json.loads(merged.read_text())["meta"]["canaries"]
    assert c["status"] == "passed" and c["asked"] == 2 * 2 * canaries.PER_GROUP
    assert {g["shard"] for g in c["groups"]} == {"1/2", "2/2"}
    # a shard whose canaries failed (its report edited so): the merge cannot pass
    bad = json.loads(outs[1].read_text())
    group = bad["meta"]["canaries"]["groups"][0]
    group.update(passed=False, right=4, wrong=4, wrong_items=[{"item": "x", "expected": "unsupported", "value": 0.9}])
    outs[1].write_text(json.dumps(bad))
    r = cli("merge", *outs, "--out", merged)
    assert r.exit_code == 4, r.output
    assert "faithfulness: could not evaluate: the judge got 4 of 8 canaries wrong (statements, English, shard 2/2)" \
        in " ".join(r.output.split())
