"""The `lead=preceding` option of faithfulness and context recall: each statement shown after the sample's question
and the sentences before it in its text (at most LEAD_SENTENCES), read with them and judged alone."""
from __future__ import annotations

import re

import pytest

from localragas.asking.statements import lead_of
from localragas.asking.ways import LEAD_SENTENCES, Way
from localragas.core.outputs import YesNo
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts import digest, verdicts
from localragas.prompts.verdicts import LEAD_NOTE
from localragas.scoring import Scoring

from metrics_helpers import Texts

FAITH = all_metrics()["faithfulness"].with_options(lead="preceding")
RECALL = all_metrics()["context_recall"].with_options(statements="sentences", lead="preceding")
CONTEXTS = ["A bucket must be empty before it can be deleted. Delete its objects first."]
BUCKET = Texts("Can I delete a bucket that still contains objects?", CONTEXTS,
               "No. The bucket must be empty. Delete the objects first. Then delete it. It is gone for good.",
               "No. A bucket must be empty before it can be deleted.")


def tag(prompt, name: str) -> str | None:
    """The text in a tag of the prompt's statement part (after the shared prefix), or None when it is absent."""
    m = re.search(rf"<{name}>\n(.*?)\n</{name}>", prompt.user[prompt.splits[0]:], re.S)
    return m.group(1) if m else None


def yes(prompt, output):
    assert output is YesNo
    return {"p_yes": 0.8, "mass": 1.0}


def test_each_sentence_is_shown_after_the_question_and_the_sentences_before_it():
    judge = FakeJudge(responder=yes)
    r = FAITH.score(Scoring(BUCKET(), judge))
    asked = [(tag(c.prompt, "statement"), tag(c.prompt, "question"), tag(c.prompt, "text_before"))
             for c in judge.calls]
    q = BUCKET.question
    assert LEAD_SENTENCES == 3
    assert asked == [
        ("No.", q, None),  # the first sentence: nothing before it, the question only
        ("The bucket must be empty.", q, "No."),
        ("Delete the objects first.", q, "No. The bucket must be empty."),
        ("Then delete it.", q, "No. The bucket must be empty. Delete the objects first."),
        ("It is gone for good.", q, "The bucket must be empty. Delete the objects first. Then delete it."),  # 3 nearest
    ]
    assert all(LEAD_NOTE["en"] in c.prompt.user[c.prompt.splits[0]:] for c in judge.calls)
    # the lead comes after the shared prefix: the calls of one sample still share it, and it is the plain question's
    plain = FakeJudge(responder=yes)
    all_metrics()["faithfulness"].score(Scoring(BUCKET(), plain))
    prefixes = {c.prompt.user[:c.prompt.splits[0]] for c in judge.calls + plain.calls}
    assert len(prefixes) == 1
    assert r.value == pytest.approx(0.8) and r.evidence["calibrated"] is False


def test_the_plain_question_shows_no_lead():
    judge = FakeJudge(responder=yes)
    all_metrics()["faithfulness"].score(Scoring(BUCKET(), judge))
    assert all(tag(c.prompt, "question") is None and LEAD_NOTE["en"] not in c.prompt.user for c in judge.calls)


def test_context_recall_reads_the_reference_with_the_question():
    judge = FakeJudge(responder=yes)
    RECALL.score(Scoring(BUCKET(), judge))
    assert [(tag(c.prompt, "statement"), tag(c.prompt, "text_before")) for c in judge.calls] == [
        ("No.", None), ("A bucket must be empty before it can be deleted.", "No.")]
    assert {tag(c.prompt, "question") for c in judge.calls} == {BUCKET.question}


def test_a_claim_the_judge_extracted_is_shown_with_the_question_only():
    def respond(prompt, output):
        if prompt.name == "extract_claims":
            return {"claims": ["A bucket with objects cannot be deleted."]}
        return yes(prompt, output)
    judge = FakeJudge(responder=respond)
    FAITH.with_options(statements="claims").score(Scoring(BUCKET(), judge))
    [call] = [c for c in judge.calls if c.prompt.name == "verify_statement"]
    assert tag(call.prompt, "question") == BUCKET.question and tag(call.prompt, "text_before") is None


def test_nothing_to_show_asks_the_plain_prompt():
    """No question and the first sentence: the very prompt of the plain question (one cache entry for both)."""
    first = FakeJudge(responder=yes)
    plain = FakeJudge(responder=yes)
    sample = BUCKET(question="", answer="A bucket must be empty.")
    FAITH.score(Scoring(sample, first))
    all_metrics()["faithfulness"].score(Scoring(sample, plain))
    assert [c.prompt for c in first.calls] == [c.prompt for c in plain.calls]


def test_lead_of_in_chinese_and_for_a_statement_not_in_the_text():
    text = "不可以。桶必须是空的。先删除对象。"
    assert lead_of(text, "能删除非空的桶吗？", "先删除对象。", 3) == ("能删除非空的桶吗？", "不可以。 桶必须是空的。")
    assert lead_of(text, None, "不可以。", 3) == ("", "")
    assert lead_of(text, "q", "a claim of the judge", 3) == ("q", "")
    assert lead_of("One. Two. Three.", "q", "Three.", 1) == ("q", "Two.")


def test_a_chinese_sample_gets_the_chinese_note():
    judge = FakeJudge(responder=yes)
    FAITH.score(Scoring(BUCKET(question="能删除非空的桶吗？", contexts=["桶必须是空的才能删除。"],
                               answer="不可以。桶必须是空的。"), judge))
    assert all(LEAD_NOTE["zh"] in c.prompt.user for c in judge.calls)
    assert tag(judge.calls[1].prompt, "text_before") == "不可以。"


def test_the_family_is_named_and_the_digest_holds_the_note(monkeypatch):
    assert FAITH.graded_family == "verify_statement:lead=preceding"
    assert Way(lead="preceding", shots=3).family == "verify_statement:shots=3,lead=preceding"
    before = digest.prompts_digest(["verify_statement"])
    monkeypatch.setitem(verdicts.LEAD_NOTE, "en", "Another note.")
    assert digest.prompts_digest(["verify_statement"]) != before
