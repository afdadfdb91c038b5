"""A conversation run (`localragas eval chats.jsonl`, `evaluate`): each follow-up turn is rewritten into its standalone
question before its metrics, which read it; the report row keeps it (turn.question, turn.rewritten) and the rewrite's
call (calls_by_prompt); a given standalone question is used as it is; a run whose metrics do not read the question
asks none; a judge error in the rewrite leaves the turn's every metric unscored (exit 4); the call is cached, its
prompt can be overridden and its text is in the resume checkpoint's key."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import localragas
from localragas.cli.options import EXIT_NOT_EVALUATED
from localragas.core.errors import JudgeError
from localragas.core.reply_schemas import StandaloneQuestion
from localragas.judges import FakeJudge, fake
from localragas.metrics import get_metrics
from localragas.prompts import standalone
from localragas.prompts.digest import metrics_digest

from cli_helpers import cli, write_file, write_jsonl

CHATS = Path(__file__).resolve().parents[3] / "examples" / "chat_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-history"]
REWRITTEN = "And the premium tier? (basic plan)"  # the fake judge's rewrite of the example's follow-up
ROWS = [json.loads(line) for line in CHATS.read_text(encoding="utf-8").splitlines()]


def run(tmp_path: Path, *args: object, data: Path = CHATS) -> tuple[int, dict]:
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "--out", out, *args)
    assert out.is_file(), r.output
    return r.exit_code, json.loads(out.read_text(encoding="utf-8"))


def rows_by_id(report: dict) -> dict:
    return {s["id"]: s for s in report["samples"]}


def test_eval_rewrites_a_follow_up_and_its_report_row_keeps_the_question_and_the_call(tmp_path):
    code, report = run(tmp_path, "--no-gate")
    assert code == 0
    rows = rows_by_id(report)
    first, second = rows["plans#1"], rows["plans#2"]
    assert second["turn"]["question"] == REWRITTEN and second["turn"]["rewritten"] is True
    assert second["turn"]["user_message"] == "And the premium tier?"
    assert second["calls_by_prompt"]["standalone_question"]["calls"] == 1
    assert first["turn"]["question"] == "What does the basic plan cost?" and first["turn"]["rewritten"] is False
    assert "standalone_question" not in first["calls_by_prompt"]  # a first turn stands alone: no call
    assert "standalone_question" in report["meta"]["prompts"]["sha256"]


def test_evaluate_the_turns_metrics_read_the_standalone_question():
    judge = FakeJudge()
    report = localragas.evaluate(ROWS, judge=judge, embedder="fake", cache=False, progress=False, judge_check=False,
                                 metrics=["context_precision", "context_recall"])
    (asked,) = judge.asked("standalone_question")
    assert asked.user.rindex('<message role="user">\nAnd the premium tier?\n</message>') > asked.user.index(
        '<message role="assistant">\nThe basic plan costs $10 a month.\n</message>')
    chunks = [p.user for p in judge.asked("judge_chunk") if "premium tier is $25" in p.user]
    claims = [p.user for p in judge.asked("extract_claims")]  # context recall's reference, the question shown
    assert chunks and all(f"<question>\n{REWRITTEN}\n</question>" in u for u in chunks + claims)
    assert rows_by_id(report.model_dump())["plans#2"]["turn"]["question"] == REWRITTEN


def test_a_given_standalone_question_is_used_as_it_is(tmp_path):
    given = "What does Acme's premium tier cost per month?"
    row = json.loads(json.dumps(ROWS[0]))
    row["messages"][-1]["standalone_question"] = given
    judge = FakeJudge()
    report = localragas.evaluate([row], judge=judge, embedder="fake", cache=False, progress=False, judge_check=False,
                                 metrics=["context_precision"])
    assert judge.asked("standalone_question") == []
    assert all(f"<question>\n{given}\n</question>" in p.user for p in judge.asked("judge_chunk")
               if "premium" in p.user)
    turn = report.samples[1].turn
    assert (turn.question, turn.rewritten, turn.user_message) == (given, False, "And the premium tier?")


def test_a_run_whose_metrics_do_not_read_the_question_asks_no_rewrite(tmp_path):
    code, report = run(tmp_path, "-m", "faithfulness", "--no-gate")
    second = rows_by_id(report)["plans#2"]
    assert code == 0 and "standalone_question" not in second["calls_by_prompt"]
    assert second["turn"]["question"] == "And the premium tier?" and second["turn"]["rewritten"] is False
    assert "standalone_question" not in report["meta"]["prompts"]["sha256"]


def test_a_judge_error_in_the_rewrite_leaves_every_metric_of_the_turn_unscored_and_fails_the_gate(tmp_path,
                                                                                                  monkeypatch):
    real = fake.heuristic_reply

    def respond(prompt, output):
        if output is StandaloneQuestion:
            return JudgeError("server unreachable after 3 attempts: connection refused")
        return real(prompt, output)

    monkeypatch.setattr(fake, "heuristic_reply", respond)
    code, report = run(tmp_path)
    assert code == EXIT_NOT_EVALUATED == 4
    rows = rows_by_id(report)
    failed = rows["plans#2"]["metrics"]
    assert set(failed) == {"faithfulness", "answer_relevancy", "context_precision", "context_recall"}
    assert all(m["value"] is None and m["unscored"] == "judge_error: server unreachable after 3 attempts: "
               "connection refused" for m in failed.values())
    assert rows["plans#2"]["turn"]["rewritten"] is False  # never scored on the follow-up as written
    assert rows["plans#1"]["metrics"]["faithfulness"]["value"] is not None  # the other turns are scored


def test_the_rewrite_is_cached(tmp_path):
    judge = FakeJudge()
    for _ in range(2):
        report = localragas.evaluate(ROWS, judge=judge, embedder="fake", cache_dir=tmp_path / "cache",
                                     progress=False, judge_check=False, metrics=["context_precision"])
    assert len(judge.asked("standalone_question")) == 1
    assert report.samples[1].calls_by_prompt["standalone_question"]["cache_hits"] == 1
    assert report.samples[1].turn.question == REWRITTEN


def test_the_rewrite_prompt_can_be_overridden(tmp_path):
    mine = write_file(tmp_path, "mine.txt", "Rewrite the latest message so that it names what it is about.")
    judge = FakeJudge()
    report = localragas.evaluate(ROWS, judge=judge, embedder="fake", cache=False, progress=False, judge_check=False,
                                 metrics=["context_precision"], prompts={"standalone_question": mine})
    (asked,) = judge.asked("standalone_question")
    assert "names what it is about" in asked.user and standalone.INSTRUCTIONS["en"] not in asked.user
    assert report.meta["prompts"]["overridden"] == {"standalone_question": str(mine)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_changed_rewrite_prompt_changes_the_checkpoint_key_of_runs_that_read_the_question(monkeypatch, lang):
    reading, not_reading = get_metrics(["context_precision"]), get_metrics(["faithfulness"])
    before = metrics_digest(reading), metrics_digest(not_reading)
    monkeypatch.setitem(standalone.INSTRUCTIONS, lang, standalone.INSTRUCTIONS[lang] + "\nBe careful.")
    assert metrics_digest(reading) != before[0] and metrics_digest(not_reading) == before[1]


def test_a_conversation_and_a_single_sample_share_a_file(tmp_path):
    single = {"id": "s", "question": "What does the basic plan cost?", "answer": "It costs $10 a month.",
              "contexts": ["Acme's basic plan costs $10 per month."]}
    data = write_jsonl(tmp_path / "mixed.jsonl", [single, *ROWS])
    code, report = run(tmp_path, "--no-gate", data=data)
    rows = rows_by_id(report)
    assert code == 0 and rows["s"].get("turn") is None and "standalone_question" not in rows["s"]["calls_by_prompt"]
    assert rows["plans#2"]["turn"]["rewritten"] is True


def test_a_window_too_small_for_the_rewrite_is_refused_for_conversations_only():
    from localragas.core.errors import ConfigError
    from localragas.judge_calls.window import needed_window

    needed = needed_window(FakeJudge(), "standalone_question")
    small = FakeJudge(n_ctx=needed - 1)
    with pytest.raises(ConfigError, match=f"n_ctx={needed - 1} tokens, but the standalone_question prompt needs at "
                                          f"least {needed}"):
        localragas.evaluate(ROWS, judge=small, embedder="fake", cache=False, progress=False,
                            metrics=["context_precision"])
    assert small.calls == []  # refused before any judging
    single = [{"id": "s", "question": "What does the basic plan cost?", "answer": "It costs $10 a month.",
               "contexts": ["Acme's basic plan costs $10 per month."]}]
    report = localragas.evaluate(single, judge=small, embedder="fake", cache=False, progress=False,
                                 judge_check=False, metrics=["context_precision"])  # asks no rewrite: not refused
    assert report.samples[0].metrics["context_precision"].scored
    assert "standalone_question" not in report.meta["prompts"]["sha256"]


def test_a_turn_row_with_its_history_is_rewritten_and_its_faithfulness_reads_the_users_words():
    earlier = [{"role": "user", "content": "What does the basic plan cost?"},
               {"role": "assistant", "content": "The basic plan costs $10 a month."}]
    row = {"id": "t2", "question": "And the premium tier?",
           "answer": "The premium tier costs $25 a month. You asked what the basic plan costs.",
           "contexts": ["The premium tier is $25 per month."], "history": earlier}
    judge = FakeJudge()
    report = localragas.evaluate([row], judge=judge, embedder="fake", cache=False, progress=False,
                                 judge_check=False, metrics=["faithfulness", "context_precision"])
    assert report.samples[0].turn.question == REWRITTEN and report.samples[0].turn.rewritten
    asked = judge.asked("verify_statement")
    assert all("$10 a month" not in p.user for p in asked)  # never the assistant's earlier reply
    # the statement the context does not support is asked again against the user's words
    assert any("- What does the basic plan cost?\n- And the premium tier?\n</context>" in p.user for p in asked)
