"""The judge check (run/judge_check.py): a judge that cannot tell obvious supported from unsupported statements, or
relevant from irrelevant chunks, stops the run before any sample is scored (exit 5); --no-judge-check skips it (the
report says so); its answers are cached; during a run, a graded metric whose P(yes) is flat could not be evaluated
(exit 4) when the check did not vouch for the judge.

The judges here are a stub OpenAI-compatible server (http.server on 127.0.0.1, port 0) whose graded P(yes) is a
policy of the prompt (the openai backend reads it from the top log-probabilities), and the fake judge."""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator

import pytest

from localragas.judges import catalogue
from localragas.core.errors import JudgeCheckError, JudgeError
from localragas.core.reply_schemas import YesNo
from localragas.data.schema import Sample
from localragas.judges import FakeJudge, Judging, get_judge
from localragas.prompts.overrides import load_overrides
from localragas.judges.fake import heuristic_reply
from localragas.judge_calls.support import support_prompts
from localragas.metrics import get_metrics
from localragas.report.markdown import render_markdown
from localragas.run import judge_check
from localragas.run.runner import evaluate

from cli_helpers import cli, write_jsonl
from stub_server import GradedJudge, always, periodic, separating

# the check's calls on an English run: every statement and chunk it asks, one graded call each
ENGLISH_CALLS = len(judge_check.STATEMENT_ORDER) + len(judge_check.CHUNK_ORDER)

MARK = "Zanzibar"  # in every sample's context: a request that holds it asks about a sample


def about_samples(stub: GradedJudge) -> list[str]:
    """The requests that asked about a sample (not the judge check's items, nor a canary)."""
    return [u for u in stub.asked if MARK in u]


@pytest.fixture
def serve():
    stubs: list[GradedJudge] = []

    def start(policy: Callable[[str], float]) -> GradedJudge:
        stubs.append(GradedJudge(policy))
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


def openai(*stubs: GradedJudge) -> tuple[str, ...]:
    """The flags of an openai judge on these stub servers: several are round-robin replicas (base_url=A,B)."""
    urls = ",".join(stub.url for stub in stubs)
    return ("--judge", "openai:stub", "--judge-option", f"base_url={urls}", "--judge-option", "retries=0")


@pytest.mark.parametrize("p", [0.99, 0.55])
def test_a_judge_that_gives_every_item_one_p_yes_stops_the_run_with_exit_5_before_any_sample_is_asked(
        serve, tmp_path, p):
    stub = serve(lambda user: p)
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--out", out)
    assert r.exit_code == 5, r.output
    assert stub.asked and not about_samples(stub)  # the check asked; no sample was
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
    assert about_samples(stub)
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
        ("verify_statement", "en", len(judge_check.STATEMENT_ORDER), True),
        ("judge_chunk", "en", len(judge_check.CHUNK_ORDER), True)]
    assert statements["min_yes"] == 0.99 and statements["max_no"] < statements["min_yes"]
    assert statements["margin"] >= judge_check.MIN_MARGIN and chunks["margin"] >= judge_check.MIN_MARGIN
    assert check["rule"] == {"min_auc": judge_check.MIN_AUC, "min_margin": judge_check.MIN_MARGIN,
                             "min_accuracy": judge_check.MIN_ACCURACY,
                             "statement_order": judge_check.STATEMENT_ORDER,
                             "chunk_order": judge_check.CHUNK_ORDER}


def test_no_judge_check_lets_the_run_go_on_and_every_report_says_skipped(serve, tmp_path):
    stub = serve(lambda user: 0.99)
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    r = cli("eval", data, *METRICS, *openai(stub), "--no-cache", "--no-resume", "--no-judge-check", "--out", out,
            "--md", md)
    assert r.exit_code == 0, r.output  # a yes-machine passes the gate when nobody checks it
    assert stub.asked == about_samples(stub)  # the check asked nothing
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
    statements = [t for t, _ in judge_check.ordered(data.statements, judge_check.STATEMENT_ORDER)]
    judging = Judging(judge, prompts=load_overrides({"verify_statement": str(instruction)}))
    assert [p.user for p in asked] == [judging.with_overrides(p).user for s in statements
                                       for p in support_prompts(s, [data.context], "en", metric.options.question)]


def test_json_verdicts_are_checked_by_accuracy(tmp_path):
    en = Sample(id="e", question="Where?", contexts=["Paris."], answer="Paris.")
    options = {"faithfulness": {"verdicts": "json"}}
    report = evaluate([en], metrics=["faithfulness"], judge=FakeJudge(checked=True), cache=False,
                      metric_options=options)
    n = len(judge_check.STATEMENT_ORDER)
    assert judge_check.check_line(report.meta).startswith("judge check passed: the judge told supported from "
                                                          f"unsupported statements apart ({n} of {n} items right)")
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


# --- a judge whose answers depend on the call's position, not its content ---------------------------------------

def test_two_round_robin_replicas_stuck_on_yes_and_on_no_fail_the_check_exit_5(serve, tmp_path):
    """base_url=A,B: the calls alternate between A (always "yes") and B (always "no"); asked in an order whose labels
    alternate, the check would see a perfect judge (AUC 1.00) and the run would pass on answers with no support."""
    a, b = serve(always(0.99)), serve(always(0.01))
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out = tmp_path / "r.json"
    r = cli("eval", data, *METRICS, *openai(a, b), "--no-cache", "--no-resume", "--out", out)
    assert r.exit_code == 5, r.output
    assert a.asked and b.asked and not about_samples(a) + about_samples(b)  # both asked by the check; no sample
    assert not out.exists()
    assert "judge check failed: the judge openai/stub cannot tell obvious supported from unsupported" in \
        " ".join(r.output.split())


# position-only judges: the n-th call answered by a fixed pattern, whatever it asks (period 1: content-blind)
PATTERNS = {"always yes": [0.99], "always no": [0.01], "alternating": [0.99, 0.01], "alternating from no": [0.01, 0.99],
            "yes yes no": [0.99, 0.99, 0.01], "yes no no": [0.99, 0.01, 0.01], "yes yes no no": [0.99, 0.99, 0.01, 0.01],
            "yes no no no": [0.99, 0.01, 0.01, 0.01], "graded period 4": [0.9, 0.2, 0.7, 0.05]}


@pytest.mark.parametrize("pattern", PATTERNS, ids=list(PATTERNS))
@pytest.mark.parametrize("way", ["plain", "both"])
def test_a_judge_answering_by_call_position_fails_the_check_exit_5(serve, tmp_path, pattern, way):
    stub = serve(periodic(PATTERNS[pattern]))
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    both = ("--metric-option", "faithfulness.question=both", "--metric-option", "context_precision.questions=both")
    r = cli("eval", data, *METRICS, *(both if way == "both" else ()), *openai(stub), "--no-cache", "--no-resume")
    assert r.exit_code == 5, r.output
    assert not about_samples(stub)


def _position_judges(n: int) -> Iterator[tuple[str, list[float]]]:
    """Every judge of n items whose answers depend only on the item's position: each class of positions modulo
    2..POSITION_PERIODS given any of the classes' weak orders, and every function that rises or falls with the
    position (any cut into segments, a value a segment). Values from 0.01 to 0.99, so the margin is never what
    refuses them."""
    for p in range(2, judge_check.POSITION_PERIODS + 1):
        for levels in itertools.product(range(p), repeat=p):
            yield f"period {p} {levels}", [0.01 + 0.98 * levels[i % p] / (p - 1) for i in range(n)]
    for cuts in itertools.product([False, True], repeat=n - 1):
        segment = list(itertools.accumulate([0, *cuts]))
        top = max(segment[-1], 1)
        rising = [0.01 + 0.98 * k / top for k in segment]
        yield f"rising {cuts}", rising
        yield f"falling {cuts}", rising[::-1]


@pytest.mark.parametrize("kind", ["statements", "chunks"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_answer_by_position_alone_passes_the_check(kind, lang):
    """The check's orders (STATEMENT_ORDER, CHUNK_ORDER) against every position-only judge of a short period or a
    trend, graded (AUC and margin) and as JSON verdicts (accuracy): none passes. A call period of 2k with two calls
    an item (question=both) is a period of k items; a JSON list is one call, its positions the items'."""
    listed = judge_check.STATEMENTS[lang].statements if kind == "statements" else judge_check.CHUNKS[lang].chunks
    order = judge_check.STATEMENT_ORDER if kind == "statements" else judge_check.CHUNK_ORDER
    items = judge_check.ordered(listed, order)
    assert ["y" if yes else "n" for _, yes in items] == list(order)
    assert len({t for t, _ in items}) == len(items)  # each item once
    judges = list(_position_judges(len(items)))
    assert len(judges) > 600
    for name, values in judges:
        graded = judge_check.figures(kind, items, values, graded=True)
        assert not graded["passed"], (name, graded["auc"], graded["margin"])
        verdicts = judge_check.figures(kind, items, [1.0 if v >= 0.5 else 0.0 for v in values], graded=False)
        assert not verdicts["passed"], (name, verdicts["accuracy"])
    # a judge that reads the items passes, in any order
    right = [0.9 if yes else 0.1 for _, yes in items]
    assert judge_check.figures(kind, items, right, graded=True)["passed"]
