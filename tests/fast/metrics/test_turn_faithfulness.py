"""Turn faithfulness (docs/conversations.md, "Turn faithfulness: the rule"): a conversation turn's statements are
judged against its contexts exactly as a single sample's, and those the contexts do not support are asked again
against the user's own messages up to it (a passage labelled as what the user said), keeping the higher verdict;
never the assistant's earlier replies nor system messages. A single sample is asked exactly as before."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from localragas.data.dataset import load_samples
from localragas.data.sample_inputs import as_samples
from localragas.judge_calls.sample_context import Scoring
from localragas.judges import FakeJudge
from localragas.judges.embeddings import HashingEmbedder
from localragas.metrics import all_metrics
from localragas.prompts.verdicts import USER_WORDS
from localragas.run.runner import evaluate

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAITH = all_metrics()["faithfulness"]
SYSTEM = "Always say the premium tier includes free onboarding."
WEATHER = "Lisbon in July: average high 28 degrees, little rain."
HALLUCINATED = "The premium tier includes free onboarding for every new team."
CHAT = {"id": "ana", "messages": [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "My name is Ana and I live in Lisbon."},
    {"role": "assistant", "content": f"You are Ana and you live in Lisbon. {HALLUCINATED}", "contexts": []},
    {"role": "user", "content": "What's the weather like there in July?"},
    {"role": "assistant", "content": f"Ana lives in Lisbon. Lisbon averages 28 degrees in July. {HALLUCINATED}",
     "contexts": [WEATHER]},
]}


def scored_turn(options: dict | None = None):
    judge = FakeJudge()
    turn = as_samples([CHAT])[-1]
    metric = FAITH.with_options(**options) if options else FAITH
    return metric.score(Scoring(turn, judge)), judge


USER_PASSAGE = (f'<context id="1">\n{USER_WORDS["en"]}\n- My name is Ana and I live in Lisbon.\n'
                "- What's the weather like there in July?\n</context>")


def test_a_turn_is_judged_against_its_contexts_then_the_users_own_words():
    result, judge = scored_turn()
    asked = judge.asked("verify_statement")
    alone = FakeJudge()  # the same turn as a single sample: its contexts' verdicts are asked exactly so
    FAITH.score(Scoring(as_samples([CHAT])[-1].model_copy(update={"turn": None}), alone))
    assert [p.user for p in asked[:3]] == [p.user for p in alone.asked("verify_statement")]
    again = asked[3:]  # the statements the contexts do not support, asked against what the user said
    assert [p.user[p.splits[0]:] for p in again] == [p.user[p.splits[0]:] for p in asked[:3]
                                                     if "28 degrees" not in p.user[p.splits[0]:]]
    for prompt in again:
        assert prompt.user.startswith(USER_PASSAGE + "\n")
    for prompt in asked:
        shared = prompt.user[:prompt.splits[0]]
        assert "You are Ana" not in shared and SYSTEM not in shared  # not the assistant's words, nor the system's
    claims = {c["claim"]: c for c in result.evidence["claims"]}
    assert {k: c["supported"] for k, c in claims.items()} == {
        "Ana lives in Lisbon.": True,  # the user said it
        "Lisbon averages 28 degrees in July.": True,  # the context says it
        HALLUCINATED: False}  # the assistant said it before: no support for saying it again
    assert claims["Ana lives in Lisbon."].get("by_user_words") is True
    assert "by_user_words" not in claims["Lisbon averages 28 degrees in July."]


def test_the_json_verdicts_ask_the_users_words_after_the_contexts():
    result, judge = scored_turn({"verdicts": "json"})
    first, second = judge.asked("verify_statements")
    assert WEATHER in first.user and USER_WORDS["en"] not in first.user
    assert second.user.startswith(USER_PASSAGE) and "You are Ana" not in second.user
    assert result.value == pytest.approx(2 / 3)


def test_a_turn_without_contexts_is_judged_against_the_users_words():
    first = as_samples([CHAT])[0]  # its assistant retrieved nothing
    judge = FakeJudge()
    result = FAITH.score(Scoring(first, judge))
    assert all(p.user.startswith(f'<context id="1">\n{USER_WORDS["en"]}\n- My name is Ana and I live in Lisbon.\n'
                                 "</context>") for p in judge.asked("verify_statement"))
    assert result.evidence["note"] == "no retrieved contexts: only the user's own words can support a statement"
    assert {c["claim"]: c["supported"] for c in result.evidence["claims"]} == {"You are Ana and you live in Lisbon.": True,
                                                                               HALLUCINATED: False}


def test_a_chinese_turn_labels_the_users_words_in_chinese():
    chat = {"messages": [{"role": "user", "content": "我叫安娜，住在里斯本。"},
                         {"role": "assistant", "content": "安娜住在里斯本。", "contexts": ["东京七月很热。"]}]}
    judge = FakeJudge()
    FAITH.score(Scoring(as_samples([chat])[0], judge))
    assert f'<context id="1">\n{USER_WORDS["zh"]}\n- 我叫安娜，住在里斯本。\n</context>' in judge.calls[-1].prompt.user


# sha256 of every prompt the four core metrics (and faithfulness with claims and JSON verdicts) asked about the first
# three example samples, computed on main before conversations were scored, and again after context precision's
# one-chunk prompt took its instruction into the shared prefix (docs/speed.md): single samples are asked as they were,
# so their judge cache and calibration hold
SINGLE_PROMPTS = "b8b946843b5a6402a5406fa0abb3ef4a028c70f70d76c41e16a8ab5f3a7a8653"


def test_a_single_sample_is_asked_exactly_as_before():
    samples = load_samples(EXAMPLES)[0][:3]
    judge = FakeJudge()
    common = {"judge": judge, "judge_check": False, "cache": False, "progress": False}
    evaluate(samples, metrics=["faithfulness", "answer_relevancy", "context_precision", "context_recall"],
             embedder=HashingEmbedder(), **common)
    evaluate(samples, metrics=["faithfulness"],
             metric_options={"faithfulness": {"statements": "claims", "verdicts": "json"}}, **common)
    asked = [[c.prompt.name, c.prompt.system, c.prompt.user] for c in judge.calls]
    assert "standalone_question" not in {name for name, _, _ in asked}
    assert hashlib.sha256(json.dumps(asked, ensure_ascii=False).encode()).hexdigest() == SINGLE_PROMPTS
