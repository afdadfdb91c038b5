"""answer_relevancy questions=checked (the default): each generated question is checked against the answer with a
graded yes/no call, and a question the answer does not reply to adds nothing to the score; questions=generated is
the RAGAS way, as before. Asserted on what the fake judge was asked."""
from __future__ import annotations

import math

import pytest

from localragas import evaluate
from localragas.judge_calls import needed_window
from localragas.core.errors import ConfigError
from localragas.report.evidence import brief
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.core.reply_schemas import GeneratedQuestions, YesNo
from localragas.prompts import generate_questions
from localragas.prompts.base import ONE_WORD, YES_NO_SYSTEMS, tagged
from localragas.prompts.questions import CHECK, SELF_DESCRIPTION
from localragas.data.schema import Sample
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import StubEmbedder, graded

RELEVANCY = all_metrics()["answer_relevancy"]
RAGAS_WAY = RELEVANCY.with_options(questions="generated")
QUESTION = "What is the capital of Australia?"
ANSWER = "Canberra is the capital of Australia. It was chosen as a compromise between Sydney and Melbourne."
GEN = ["Which city is the capital of Australia?", "Why was Canberra chosen?", "What is Sydney?"]
SAMPLE = Sample(id="s", question=QUESTION, answer=ANSWER)


def embedder(*cosines: float) -> StubEmbedder:
    """The user's question along x; GEN[i] at cosine cosines[i] to it."""
    return StubEmbedder({QUESTION: [1.0, 0.0], **{q: [c, math.sqrt(1 - c * c)] for q, c in zip(GEN, cosines)}})


def test_each_generated_question_is_checked_after_the_answer_which_is_the_shared_prefix():
    judge = FakeJudge([{"questions": GEN, "noncommittal": False}, *graded(0.9, 0.8, 0.7)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert [c.prompt.name for c in judge.calls] == ["generate_questions", *["check_question"] * 3]
    checks = [c.prompt for c in judge.calls[1:]]
    assert all(c.output is YesNo for c in judge.calls[1:]) and judge.calls[0].output is GeneratedQuestions
    shared = {p.user[:p.splits[0]] for p in checks}
    assert len(shared) == 1 and all(len(p.splits) == 1 for p in checks)  # the answer part, byte-identical
    (prefix,) = shared
    assert prefix.startswith(tagged("answer", ANSWER)) and CHECK["en"] in prefix and "<question>" not in prefix
    for p, q in zip(checks, GEN):
        assert p.user[p.splits[0]:].startswith(tagged("question", q))  # the generated question, after the answer
        assert p.user.endswith(ONE_WORD["en"]) and p.system == YES_NO_SYSTEMS["en"]
    rows = r.evidence["generated_questions"]
    assert [g["p_answered"] for g in rows] == [0.9, 0.8, 0.7] and all(g["answered"] for g in rows)
    assert r.evidence["questions"] == "checked"
    # answered questions keep their similarity: the score is the RAGAS way's
    judge = FakeJudge([{"questions": GEN, "noncommittal": False}])
    plain = RAGAS_WAY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert math.isclose(r.value, (1.0 + 0.6 + 0.2) / 3, abs_tol=1e-6) and r.value == plain.value


def test_a_question_the_answer_does_not_reply_to_does_not_raise_the_score():
    """An answer that writes the user's question into its text makes the judge generate it (cosine 1); the check
    says the answer does not reply to it, so it counts 0; a negative similarity stays negative."""
    gen = {"questions": GEN, "noncommittal": False}
    r = RELEVANCY.score(Scoring(SAMPLE, FakeJudge([gen, *graded(0.1, 0.9, 0.9)]), embedder(1.0, 0.3, 0.0)))
    plain = RAGAS_WAY.score(Scoring(SAMPLE, FakeJudge([gen]), embedder(1.0, 0.3, 0.0)))
    assert math.isclose(r.value, 0.3 / 3, abs_tol=1e-6) and math.isclose(plain.value, 1.3 / 3, abs_tol=1e-6)
    first = r.evidence["generated_questions"][0]
    assert first == {"question": GEN[0], "similarity": 1.0, "answered": False, "p_answered": 0.1}  # shown as is
    assert brief("answer_relevancy", r).startswith(f'similarities 1.00, 0.30, 0.00; not replied to by the answer '
                                                   f'(counted 0): "{GEN[0]}"')
    negative = RELEVANCY.score(Scoring(SAMPLE, FakeJudge([gen, *graded(0.4, 1.0, 1.0)]), embedder(-0.6, 1.0, 1.0)))
    assert math.isclose(negative.value, (-0.6 + 2.0) / 3, abs_tol=1e-6)  # not raised to 0


def test_with_questions_generated_the_metric_asks_and_scores_as_before():
    judge = FakeJudge([{"questions": GEN, "noncommittal": False}])
    r = RAGAS_WAY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    (call,) = judge.calls
    assert call.prompt == generate_questions(ANSWER, "en", "en")  # the prompt of before: no self-description rule
    assert SELF_DESCRIPTION["en"] not in call.prompt.user
    assert all(set(g) == {"question", "similarity"} for g in r.evidence["generated_questions"])
    assert math.isclose(r.value, 0.6, abs_tol=1e-6) and r.evidence["questions"] == "generated"
    assert RAGAS_WAY.prompts == ("generate_questions",)
    assert RELEVANCY.prompts == ("generate_questions", "check_question")
    assert dict(RELEVANCY.options) == {"questions": "checked"}


def test_checked_questions_are_generated_with_the_rule_that_the_flag_is_what_the_answer_says():
    judge = FakeJudge([{"questions": GEN, "noncommittal": False}])
    RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    user = judge.calls[0].prompt.user
    assert user.index(SELF_DESCRIPTION["en"]) < user.index("<answer>")  # an instruction, before the data


def test_a_noncommittal_answer_that_does_not_reply_to_the_question_scores_0():
    judge = FakeJudge([{"questions": GEN, "noncommittal": True}, *graded(0.1, 0.6, 0.2, 0.3)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert [c.prompt.name for c in judge.calls] == ["generate_questions", *["check_question"] * 4]
    last = judge.calls[-1].prompt
    assert last.user[last.splits[0]:].startswith(tagged("question", QUESTION))  # the user's question, on the prefix
    assert len({c.prompt.user[:c.prompt.splits[0]] for c in judge.calls[1:]}) == 1
    assert r.value == 0.0 and r.evidence["noncommittal"] is True and "noncommittal_overruled" not in r.evidence
    assert [g["p_answered"] for g in r.evidence["generated_questions"]] == [0.1, 0.6, 0.2]
    assert r.evidence["p_answers_question"] == 0.3
    assert brief("answer_relevancy", r) == "noncommittal answer (scored 0)"


def test_the_flag_is_overruled_when_the_answer_replies_to_the_question():
    """relev-07 of docs/injection.md: a correct answer with a line calling itself evasive made the judge raise the
    flag; the answer's statements reply to the user's question, so the flag does not stand."""
    judge = FakeJudge([{"questions": GEN, "noncommittal": True}, *graded(0.9, 0.7, 0.2, 0.8)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert r.evidence["noncommittal"] is False and r.evidence["noncommittal_overruled"] is True
    assert r.evidence["p_answers_question"] == 0.8
    assert math.isclose(r.value, (1.0 + 0.6 + 0.0) / 3, abs_tol=1e-6)  # the unanswered third counts 0
    assert "flagged noncommittal, overruled" in brief("answer_relevancy", r)


def test_a_user_question_generated_from_a_flagged_answer_is_checked_once():
    judge = FakeJudge([{"questions": [QUESTION, *GEN[1:]], "noncommittal": True}, *graded(0.4, 0.9, 0.9)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert len(judge.asked("check_question")) == 3 and r.evidence["p_answers_question"] == 0.4
    assert r.value == 0.0 and r.evidence["noncommittal"] is True


def test_an_answer_not_flagged_is_not_checked_against_the_user_question():
    judge = FakeJudge([{"questions": GEN, "noncommittal": False}, *graded(0.9, 0.9, 0.9)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert len(judge.asked("check_question")) == 3 and "p_answers_question" not in r.evidence


def test_with_questions_generated_a_noncommittal_answer_scores_0_without_checks():
    judge = FakeJudge([{"questions": GEN, "noncommittal": True}])
    r = RAGAS_WAY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert r.value == 0.0 and [c.prompt.name for c in judge.calls] == ["generate_questions"]


def test_the_fake_judge_keeps_a_dodging_answer_noncommittal():
    dodge = Sample(id="d", question=QUESTION, answer="I don't know what the capital of Australia is.")
    asked = "What about I don't know what the capital of Australia is?"  # the fake's question: the first sentence
    r = RELEVANCY.score(Scoring(dodge, FakeJudge(), StubEmbedder({QUESTION: [1.0, 0.0], asked: [1.0, 0.0]})))
    assert r.value == 0.0 and r.evidence["noncommittal"] is True
    assert all(g["p_answered"] == 0.0 for g in r.evidence["generated_questions"])


def test_a_question_generated_twice_is_checked_once():
    judge = FakeJudge([{"questions": [GEN[0], GEN[0], GEN[1]], "noncommittal": False}, *graded(0.9, 0.2)])
    r = RELEVANCY.score(Scoring(SAMPLE, judge, embedder(1.0, 0.6, 0.2)))
    assert [p.user.split("<question>\n")[1].split("\n")[0] for p in judge.asked("check_question")] == GEN[:2]
    assert [g["p_answered"] for g in r.evidence["generated_questions"]] == [0.9, 0.9, 0.2]
    assert math.isclose(r.value, 2.0 / 3, abs_tol=1e-6)


def test_a_chinese_answer_is_checked_with_the_chinese_prompt():
    zh = Sample(id="zh", question="澳大利亚的首都是哪里？", answer="堪培拉是澳大利亚的首都。")
    gen = ["澳大利亚的首都是哪座城市？", "堪培拉是哪个国家的首都？", "澳大利亚首都叫什么？"]
    judge = FakeJudge([{"questions": gen, "noncommittal": False}, *graded(1.0, 1.0, 1.0)])
    r = RELEVANCY.score(Scoring(zh, judge, StubEmbedder({zh.question: [1.0, 0.0], **{q: [1.0, 0.0] for q in gen}})))
    generate, *checks = (c.prompt for c in judge.calls)
    assert SELF_DESCRIPTION["zh"] in generate.user
    assert len(checks) == 3 and all(p.system == YES_NO_SYSTEMS["zh"] for p in checks)
    assert all(CHECK["zh"] in p.user[:p.splits[0]] and p.user.endswith(ONE_WORD["zh"]) for p in checks)
    assert r.value == 1.0 and r.evidence["language"] == "zh"


def test_the_option_is_checked_and_set_through_evaluate():
    with pytest.raises(ConfigError, match="questions must be one of checked, generated"):
        RELEVANCY.with_options(questions="yes")
    judge = FakeJudge()
    report = evaluate([SAMPLE], metrics=["answer_relevancy"], judge=judge, embedder="fake", gate=False,
                      metric_options={"answer_relevancy": {"questions": "generated"}})
    assert [c.prompt.name for c in judge.calls] == ["generate_questions"]
    assert report.meta["metric_options"] == {"answer_relevancy": {"questions": "generated"}}
    assert needed_window(judge, "check_question") < needed_window(judge, "generate_questions")
