"""The judge check (run/judge_check.py): a judge that cannot tell obvious supported from unsupported statements, or
relevant from irrelevant chunks, stops the run before any sample is scored (exit 5); --no-judge-check skips it (the
report says so); its answers are cached; during a run, a graded metric whose P(yes) is flat could not be evaluated
(exit 4) when the check did not vouch for the judge.

The judges here are a stub OpenAI-compatible server (http.server on 127.0.0.1, port 0) whose graded P(yes) is a
policy of the prompt (the openai backend reads it from the top log-probabilities), and the fake judge."""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from localragas.judges import catalogue
from localragas.core.errors import JudgeCheckError, JudgeError
from localragas.core.reply_schemas import YesNo
from localragas.data.schema import Sample
from localragas.judges import FakeJudge, Judging, get_judge
from localragas.prompts.overrides import load_overrides
from localragas.judges.fake import _between, _graded_share, _words, heuristic_reply
from localragas.metrics import get_metrics
from localragas.report.markdown import render_markdown
from localragas.run import judge_check
from localragas.run.runner import evaluate

from cli_helpers import cli, write_jsonl
from stub_server import StubServer, send_json

# the check's calls on an English run: every statement and chunk it asks, one graded call each
ENGLISH_CALLS = 2 * judge_check.STATEMENTS_PER_SIDE + 2 * judge_check.CHUNKS_PER_SIDE

MARK = "Zanzibar"  # in every sample's context: a request that holds it asks about a sample


def separating(user: str) -> float:
    """A judge that can judge: the fake judge's word-overlap rules (a statement by its share of words in the
    contexts, a chunk by the words it shares with the reference), kept inside (0, 1)."""
    statement = " ".join(_between(user, "statement"))
    contexts = " ".join(_between(user, "context"))
    if statement:
        p = _graded_share(_words(statement), contexts)
    else:
        target = " ".join(_between(user, "reference") or _between(user, "answer") or _between(user, "question"))
        shared = len(_words(contexts) & _words(target))
        p = 1.0 if shared >= 3 else shared / 6
    return min(max(p, 0.01), 0.99)


class Stub:
    """An OpenAI-compatible server answering graded verdicts only: P(yes) = policy(the user message)."""

    def __init__(self, policy: Callable[[str], float]):
        self.policy = policy
        self.asked: list[str] = []  # each request's user message
        self.http = StubServer(self.on_post)
        self.url = self.http.url

    def on_post(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        user = body["messages"][-1]["content"]
        self.asked.append(user)
        p = self.policy(user)
        top = [{"token": "yes", "logprob": math.log(p)}, {"token": "no", "logprob": math.log(1 - p)}]
        send_json(h, {"id": "stub", "object": "chat.completion", "model": body.get("model"),
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "yes"},
                                   "logprobs": {"content": [{"token": "yes", "logprob": top[0]["logprob"],
                                                             "top_logprobs": top}]}}],
                      "usage": {"prompt_tokens": len(user.split()), "completion_tokens": 1, "total_tokens": 0}})

    def about_samples(self) -> list[str]:
        return [u for u in self.asked if MARK in u]

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def serve():
    stubs: list[Stub] = []

    def start(policy: Callable[[str], float]) -> Stub:
        stubs.append(Stub(policy))
        return stubs[-1]

    yield start
    for s in stubs:
        s.close()


def rows(n: int = 2) -> list[dict]:
    """n samples whose answer and reference the context states (every metric here scores them high)."""
    return [{"id": f"s{i}", "question": f"Where is the spice market {i}?",
             "contexts": [f"The spice market {i} is in {MARK} old town, near the harbour."],
             "answer": f"The spice market {i} is in {MARK} old town.",
             "reference": f"The spice market {i} is in {MARK} old town near the harbour."} for i in range(n)]


# faithfulness, context precision and context recall, all graded (context recall on sentences: no JSON call)
METRICS = ("-m", "faithfulness,context_precision,context_recall", "--metric-option",
           "context_recall.statements=sentences")


def openai(stub: Stub) -> tuple[str, ...]:
    return ("--judge", "openai:stub", "--judge-option", f"base_url={stub.url}", "--judge-option", "retries=0")


@pytest.mark.parametrize("p", [0.99, 0.55])
def test_a_judge_that_gives_every_item_one_p_yes_stops_the_run_with_exit_5_before_any_sample_is_asked(
        serve, tmp_path, p):
    stub = serve(lambda user: p)
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--out", out)
    assert r.exit_code == 5, r.output
    assert stub.asked and not stub.about_samples()  # the check asked; no sample was
    assert not out.exists()
    message = " ".join(r.output.split())
    assert ("judge check failed: the judge openai/stub cannot tell obvious supported from unsupported "
            "statements") in message
    assert "relevant from irrelevant chunks" in message
    assert (f"verify_statement (English): ROC AUC 0.50 (needs {judge_check.MIN_AUC:.2f}), margin +0.00 "
            f"(needs {judge_check.MIN_MARGIN:.2f})") in message
    assert "judge_chunk (English): ROC AUC 0.50" in message
    assert f"'The Eiffel Tower is located in Berlin, Germany.' (unsupported, P(yes) {p:.3f})" in message
    assert "chat template" in message and "instruct model" in message and "--no-judge-check" in message


def test_a_judge_that_separates_passes_and_the_run_goes_on(serve, tmp_path):
    stub = serve(separating)
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--out", out)
    assert r.exit_code == 0, r.output
    assert stub.about_samples()
    check = json.loads(out.read_text())["meta"]["judge_check"]
    statements, chunks = check["families"]
    said = " ".join(r.output.split())  # in words for a CI log, the figures on a line of their own
    items = statements["items"] + chunks["items"]
    assert ("judge check passed: the judge told supported from unsupported statements and relevant from irrelevant "
            f"chunks apart ({items} of {items} items right), in") in said
    assert (f"judge check figures: statements ROC AUC 1.00, P(yes) margin {statements['margin']:.2f}; chunks ROC AUC "
            f"1.00, P(yes) margin {chunks['margin']:.2f} (to pass: AUC >= 0.75 and margin >= 0.02)") in said
    assert "AUC" not in judge_check.check_line(json.loads(out.read_text())["meta"])
    assert check["status"] == "passed" and check["calls"] == ENGLISH_CALLS and check["cache_hits"] == 0
    assert [(f["family"], f["language"], f["items"], f["passed"]) for f in check["families"]] == [
        ("verify_statement", "en", 2 * judge_check.STATEMENTS_PER_SIDE, True),
        ("judge_chunk", "en", 2 * judge_check.CHUNKS_PER_SIDE, True)]
    assert statements["min_yes"] == 0.99 and statements["max_no"] < statements["min_yes"]
    assert statements["margin"] >= judge_check.MIN_MARGIN and chunks["margin"] >= judge_check.MIN_MARGIN
    assert check["rule"] == {"min_auc": judge_check.MIN_AUC, "min_margin": judge_check.MIN_MARGIN,
                             "min_accuracy": judge_check.MIN_ACCURACY,
                             "statements_per_side": judge_check.STATEMENTS_PER_SIDE,
                             "chunks_per_side": judge_check.CHUNKS_PER_SIDE}


def test_no_judge_check_lets_the_run_go_on_and_every_report_says_skipped(serve, tmp_path):
    stub = serve(lambda user: 0.99)
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--no-judge-check", "--out", out,
            "--md", md)
    assert r.exit_code == 0, r.output  # a yes-machine passes the gate when nobody checks it
    assert stub.asked == stub.about_samples()  # the check asked nothing
    assert "judge check skipped (--no-judge-check)" in r.output
    assert "judge check skipped (--no-judge-check)" in md.read_text()
    assert json.loads(out.read_text())["meta"]["judge_check"] == {"status": "skipped", "reason": "--no-judge-check"}
    # the settings file's judge_check = false does the same
    (tmp_path / "localragas.toml").write_text("judge_check = false\n")
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--config",
            tmp_path / "localragas.toml")
    assert r.exit_code == 0 and "judge check skipped (--no-judge-check)" in r.output, r.output


def test_a_second_run_answers_the_check_from_the_judge_cache(serve, tmp_path):
    stub = serve(separating)
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    args = ("eval", data, *METRICS, *openai(stub), "--cache-dir", tmp_path / "cache", "--no-resume")
    first = cli(*args, "--out", tmp_path / "1.json")
    assert first.exit_code == 0, first.output
    asked = len(stub.asked)
    again = cli(*args, "--out", tmp_path / "2.json")
    assert again.exit_code == 0, again.output
    assert len(stub.asked) == asked  # not one request, the check's included
    one, two = (json.loads((tmp_path / f"{i}.json").read_text())["meta"]["judge_check"] for i in (1, 2))
    assert one["calls"] == ENGLISH_CALLS and one["cache_hits"] == 0
    assert two["calls"] == 0 and two["cache_hits"] == ENGLISH_CALLS
    assert two["families"] == one["families"]


def test_a_flat_judge_with_the_check_skipped_could_not_evaluate_exit_4(serve, tmp_path):
    stub = serve(lambda user: 0.55)
    data = write_jsonl(tmp_path / "d.jsonl", rows(21))  # 21 statements and 21 chunks
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--no-judge-check", "--out", out)
    assert r.exit_code == 4, r.output
    text = " ".join(r.output.split())
    for metric in ("faithfulness", "context_precision", "context_recall"):
        assert (f"{metric}: could not evaluate: the judge's P(yes) was flat (0.550 ± 0.000 over 21 items): it is "
                "not judging") in text
    gate = json.loads(out.read_text())["gate"]
    assert not gate["evaluated"] and not gate["passed"]
    assert {e["metric"] for e in gate["errors"] if not e["allowed"]} == {"faithfulness", "context_precision",
                                                                         "context_recall"}
    # the stored report gated again says the same, and --max-error-rate does not accept it
    again = cli("report", out, "--max-error-rate", "1")
    assert again.exit_code == 4, again.output


def test_the_flat_rule_holds_only_when_the_check_did_not_vouch_for_the_judge(tmp_path):
    """Every statement plainly supported: the fake judge gives each P(yes) 1.0. Having passed the check it can
    judge, so the run's flat P(yes) is the data's; with the check skipped nothing says so."""
    rows = [{"id": f"s{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red."],
             "answer": f"Item {i} is red.", "reference": f"Item {i} is red."} for i in range(20)]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    args = ("eval", data, "-m", "faithfulness", "--judge", "fake", "--no-cache", "--no-resume")
    checked = cli(*args)
    assert checked.exit_code == 0, checked.output
    assert "judge check passed" in checked.output
    skipped = cli(*args, "--no-judge-check")
    assert skipped.exit_code == 4, skipped.output
    assert "the judge's P(yes) was flat (1.000 ± 0.000 over 20 items)" in " ".join(skipped.output.split())


def test_the_check_asks_only_the_families_and_languages_the_run_uses():
    zh = Sample(id="z", question="故宫在哪里？", contexts=["故宫在北京。"], answer="故宫在北京。")
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")
    judge = FakeJudge(checked=True)
    check = judge_check.run_check(judge, get_metrics(["faithfulness"]), [en])
    assert [(f["family"], f["language"]) for f in check["families"]] == [("verify_statement", "en")]
    assert {c.prompt.name for c in judge.calls} == {"verify_statement"}
    check = judge_check.run_check(FakeJudge(checked=True), get_metrics(["context_precision", "faithfulness",
                                                                         "context_recall"]), [en, zh])
    assert [(f["family"], f["language"]) for f in check["families"]] == [
        ("judge_chunk", "en"), ("judge_chunk", "zh"), ("verify_statement", "en"), ("verify_statement", "zh")]
    assert check["status"] == "passed"
    # answer relevancy alone: nothing to check
    none = judge_check.run_check(FakeJudge(checked=True), get_metrics(["answer_relevancy"]), [en])
    assert none["status"] == "not_needed" and judge_check.check_line({"judge_check": none}) is None


def test_the_check_asks_the_way_the_metric_asks_with_the_runs_prompt_overrides(tmp_path):
    instruction = tmp_path / "i.txt"
    instruction.write_text("Is the statement backed by the context? Say yes or no.")
    judge = FakeJudge(checked=True)
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")
    both = {"faithfulness": {"question": "both"}}
    report = evaluate([en], metrics=["faithfulness"], judge=judge, cache=False,
                      prompts={"verify_statement": instruction}, metric_options=both)
    check = report.meta["judge_check"]
    assert [f["family"] for f in check["families"]] == ["verify_statement:question=both"]
    assert "statements (verify_statement:question=both) ROC AUC" in judge_check.check_details(report.meta)
    asked = [c.prompt for c in judge.calls if "Eiffel" in c.prompt.user]
    supported = [p for p in asked if p.name == "verify_statement"]
    assert supported and all("Is the statement backed by the context?" in p.user for p in supported)  # the override
    # exactly the prompts the metric's way of asking builds (the support question, then the contradiction question),
    # with the judge's override applied, as a sample's statements are asked
    metric = get_metrics(["faithfulness"], both)[0]
    data = judge_check.STATEMENTS["en"]
    statements = [t for t, _ in judge_check._take(data.statements, judge_check.STATEMENTS_PER_SIDE)]
    judging = Judging(judge, prompts=load_overrides({"verify_statement": str(instruction)}))
    assert [p.user for p in asked] == [judging.with_overrides(p).user for s in statements
                                       for p in metric.way.prompts(s, [data.context], "en")]


def test_json_verdicts_are_checked_by_accuracy(tmp_path):
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")
    options = {"faithfulness": {"verdicts": "json"}}
    report = evaluate([en], metrics=["faithfulness"], judge=FakeJudge(checked=True), cache=False,
                      metric_options=options)
    assert judge_check.check_line(report.meta).startswith("judge check passed: the judge told supported from "
                                                          "unsupported statements apart (8 of 8 items right)")
    assert judge_check.check_details(report.meta) == ("judge check figures: statements (json) accuracy 1.00 (to pass: "
                                                       "accuracy >= 0.80)")

    def all_yes(prompt, output):
        if prompt.name == "verify_statements":
            n = prompt.user.count("<statement")
            return {"verdicts": [{"id": i, "verdict": "yes"} for i in range(1, n + 1)]}
        return heuristic_reply(prompt, output)

    with pytest.raises(JudgeCheckError) as e:
        evaluate([en], metrics=["faithfulness"], judge=FakeJudge(responder=all_yes, checked=True), cache=False,
                 metric_options=options)
    assert f"verify_statements (English): accuracy 0.50 (needs {judge_check.MIN_ACCURACY:.2f})" in str(e.value)
    assert "(unsupported, said yes)" in str(e.value)


def test_the_python_api_raises_and_judge_check_false_skips(tmp_path):
    en = Sample(id="e", question="Where is the market?", contexts=[f"The market is in {MARK}."],
                answer=f"The market is in {MARK}.")
    yes = FakeJudge(responder=lambda prompt, output: {"p_yes": 0.9, "mass": 1.0} if output is YesNo else {},
                    checked=True)
    with pytest.raises(JudgeCheckError, match="judge check failed: the judge fake cannot tell"):
        evaluate([en], metrics=["faithfulness"], judge=yes, cache=False)
    assert yes.calls and not [c for c in yes.calls if MARK in c.prompt.user]
    report = evaluate([en], metrics=["faithfulness"], judge=yes, cache=False, judge_check=False)
    assert report.meta["judge_check"] == {"status": "skipped", "reason": "--no-judge-check"}


def test_the_test_judge_and_a_fake_judge_built_in_code_are_exempt_and_say_so():
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")
    assert catalogue.CATALOGUE[catalogue.TEST_JUDGE].judge_check == "exempt"
    test_judge = FakeJudge(checked=True)
    test_judge.sha256 = catalogue.CATALOGUE[catalogue.TEST_JUDGE].sha256  # as the llamacpp judge of its file has it
    report = evaluate([en], metrics=["faithfulness"], judge=test_judge, cache=False)
    assert report.meta["judge_check"] == {"status": "exempt", "reason": "test judge"}
    assert [c for c in test_judge.calls if "Eiffel" in c.prompt.user] == []
    assert "judge check exempt (test judge)" in render_markdown(report)
    scripted = evaluate([en], metrics=["faithfulness"], judge=FakeJudge(), cache=False)
    assert scripted.meta["judge_check"]["status"] == "exempt"
    assert get_judge("fake").judge_check_exempt is None  # --judge fake is checked
    assert judge_check.exemption(get_judge("fake")) is None


def test_a_judge_error_during_the_check_leaves_it_not_completed_and_the_samples_decide(tmp_path):
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")

    def down(prompt, output):
        return JudgeError("server down")  # the fake judge raises a reply that is an exception

    report = evaluate([en], metrics=["faithfulness"], judge=FakeJudge(responder=down, checked=True), cache=False)
    assert report.meta["judge_check"]["status"] == "error"
    assert report.meta["judge_check"]["calls"] == 1  # it stopped at the first error
    assert not report.gate.evaluated  # the sample's own judge error: could not evaluate, exit 4
    assert "judge check not completed" in judge_check.check_line(report.meta)
