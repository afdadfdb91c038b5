"""Graded verdicts (metric option verdicts=probability): P(yes) from the judge's next-token probabilities, one item
per call. What the judge is asked, how the probabilities become scores, caching, and the window splits."""
from __future__ import annotations

import math

import pytest

from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge
from localragas.judges.base import Judge
from localragas.judges.cache import JudgeCache
from localragas.judges.yes_no import top_from_logits, word_of, yes_no_reply
from localragas.metrics import all_metrics
from localragas.metrics.context_precision import average_precision
from localragas.core.outputs import Claims, YesNo
from localragas.prompts import judge_chunk, verify_statement
from localragas.prompts.base import ONE_WORD, YES_NO_SYSTEMS
from localragas.scoring import Scoring

from metrics_helpers import sampler

FAITH = all_metrics()["faithfulness"].with_options(verdicts="probability")
RECALL = all_metrics()["context_recall"].with_options(verdicts="probability")
PRECISION = all_metrics()["context_precision"].with_options(verdicts="probability")

QUESTION = "Which storage tiers does Acme offer?"
CONTEXTS = ["Acme offers three storage tiers: Standard, Infrequent Access and Archive.",
            "The Archive tier restores data within 12 hours."]
ANSWER = "Acme offers Standard and Archive. Archive restores in 12 hours. It is free."
REFERENCE = "Three tiers: Standard, Infrequent Access and Archive."
sample = sampler(QUESTION, CONTEXTS, ANSWER, REFERENCE)


def p(value: float) -> dict:
    return {"p_yes": value, "mass": 0.9}


# --- from top tokens to P(yes) -----------------------------------------------------------------------------------


@pytest.mark.parametrize("token, word", [("yes", "yes"), (" Yes", "yes"), ('"YES', "yes"), ("no", "no"),
                                         (" No.", "no"), ("是", "yes"), ("否", "no"), ("{\"", None), ("nope", None),
                                         ("", None)])
def test_word_of_pools_the_spellings_of_yes_and_no(token, word):
    assert word_of(token) == word


def test_yes_no_reply_pools_spellings_and_normalises_over_the_two_words():
    got = YesNo.model_validate_json(yes_no_reply(
        [("yes", math.log(0.5)), ("{\"", math.log(0.2)), (" Yes", math.log(0.1)), ("no", math.log(0.2))], "t"))
    assert got.p_yes == pytest.approx(0.6 / 0.8)
    assert got.mass == pytest.approx(0.8)


def test_yes_no_reply_without_either_word_is_a_judge_error_naming_the_top_tokens():
    with pytest.raises(JudgeError, match=r"verify_statement: neither 'yes' nor 'no'.*'\{'"):
        yes_no_reply([("{", -0.1), ("```", -2.0)], "verify_statement")


def test_top_from_logits_is_a_log_softmax_best_first():
    logits = [0.0, 2.0, 1.0, -1.0]
    top = top_from_logits(logits, lambda i: "abcd"[i], k=3)
    assert [t for t, _ in top] == ["b", "c", "a"]
    z = sum(math.exp(x) for x in logits)
    assert top[0][1] == pytest.approx(2.0 - math.log(z))


# --- the judge call: cache and counters --------------------------------------------------------------------------


def test_yes_no_is_cached_like_any_reply_and_counted(tmp_path):
    judge = FakeJudge([p(0.25)])
    judge.cache = JudgeCache(tmp_path)
    prompt = verify_statement("Acme offers Archive.", CONTEXTS)
    assert judge.p_yes(prompt) == 0.25
    assert judge.p_yes(prompt) == 0.25  # the queue is empty: this one came from the cache
    assert (judge.stats.calls, judge.stats.cache_hits, judge.stats.failed_calls) == (1, 1, 0)
    assert [c.output for c in judge.calls] == [YesNo]
    judge.close()


def test_a_backend_without_token_probabilities_says_so_and_names_the_option():
    class NoProbabilities(FakeJudge):
        _yes_no = Judge._yes_no  # the base class's: not supported

    judge = NoProbabilities()
    with pytest.raises(JudgeError, match=r"cannot give token probabilities.*METRIC.verdicts=json"):
        judge.p_yes(verify_statement("x", CONTEXTS))
    assert judge.stats.failed_calls == 1


# --- prompts -----------------------------------------------------------------------------------------------------


def test_verify_statement_asks_one_word_with_the_contexts_first():
    prompt = verify_statement("Archive restores in 12 hours.", CONTEXTS)
    assert prompt.name == "verify_statement" and prompt.system == YES_NO_SYSTEMS["en"]
    assert "JSON only" not in prompt.system and 'one word: "yes" or "no"' in prompt.system
    assert prompt.user.startswith('<context id="1">\n' + CONTEXTS[0])
    assert prompt.user.index("</context>") < prompt.user.index("<statement>\nArchive restores in 12 hours.\n</statement>")
    assert prompt.user.endswith(ONE_WORD["en"])


def test_verify_statement_in_chinese():
    prompt = verify_statement("长城始建于秦朝。", ["长城始建于春秋战国时期。"])
    assert prompt.system == YES_NO_SYSTEMS["zh"] and prompt.user.endswith(ONE_WORD["zh"])
    assert "判断上下文是否支持下面这条陈述" in prompt.user


def test_judge_chunk_puts_the_question_first_and_one_chunk():
    prompt = judge_chunk(QUESTION, REFERENCE, "reference answer", CONTEXTS[1])
    assert prompt.name == "judge_chunk"
    assert prompt.user.startswith(f"<question>\n{QUESTION}\n</question>\n<reference>\n{REFERENCE}\n</reference>")
    assert prompt.user.count("<context>") == 1 and "useful for arriving at that reference answer" in prompt.user
    alone = judge_chunk(QUESTION, "", "question", CONTEXTS[1])
    assert "<reference>" not in alone.user and "contains information that answers the question" in alone.user


# --- metrics -----------------------------------------------------------------------------------------------------


def test_faithfulness_is_the_mean_probability_one_call_per_claim_with_the_same_contexts():
    claims = ["Acme offers Standard.", "Archive restores in 12 hours.", "Acme storage is free."]
    judge = FakeJudge([Claims(claims=claims), p(0.9), p(0.8), p(0.1)])
    r = FAITH.score(Scoring(sample(), judge))
    assert r.value == pytest.approx((0.9 + 0.8 + 0.1) / 3)
    asked = judge.asked("verify_statement")
    assert [a.user.split("<statement>\n")[1].split("\n")[0] for a in asked] == claims
    assert all(a.user.split("Above are")[0] == asked[0].user.split("Above are")[0] for a in asked)  # shared prefix
    assert r.evidence["verdicts"] == "probability"
    assert [(c["supported"], c["p_supported"]) for c in r.evidence["claims"]] == [(True, 0.9), (True, 0.8),
                                                                                  (False, 0.1)]


def test_faithfulness_without_contexts_is_zero_without_a_verdict_call():
    judge = FakeJudge([Claims(claims=["A claim."])])
    r = FAITH.score(Scoring(sample(contexts=[]), judge))
    assert r.value == 0.0 and judge.asked("verify_statement") == []
    assert r.evidence["note"] == "no contexts: no claim can be supported"


def test_faithfulness_json_mode_still_asks_one_batched_call():
    judge = FakeJudge([Claims(claims=["a b c", "d e f"]),
                       {"verdicts": [{"id": 1, "verdict": "yes"}, {"id": 2, "verdict": "no"}]}])
    r = all_metrics()["faithfulness"].with_options(verdicts="json").score(Scoring(sample(), judge))
    assert r.value == 0.5 and r.evidence["verdicts"] == "json"
    assert [c.prompt.name for c in judge.calls] == ["extract_claims", "verify_statements"]


def test_context_recall_is_the_mean_probability_of_the_reference_statements():
    judge = FakeJudge([Claims(claims=["There are three tiers.", "One is Archive."]), p(0.7), p(0.2)])
    r = RECALL.score(Scoring(sample(), judge))
    assert r.value == pytest.approx(0.45)
    assert [s["p_attributed"] for s in r.evidence["statements"]] == [0.7, 0.2]
    assert len(judge.asked("verify_statement")) == 2


def test_context_precision_weights_each_rank_by_its_probability():
    judge = FakeJudge([p(0.2), p(0.9)])
    r = PRECISION.score(Scoring(sample(), judge))
    assert r.value == pytest.approx(average_precision([0.2, 0.9]))
    assert [c["p_relevant"] for c in r.evidence["chunks"]] == [0.2, 0.9]
    assert [c["relevant"] for c in r.evidence["chunks"]] == [False, True]
    asked = judge.asked("judge_chunk")
    assert [a.user.count(CONTEXTS[i]) for i, a in enumerate(asked)] == [1, 1]
    assert r.evidence["judged_against"] == "reference" and r.evidence["fraction_relevant"] == pytest.approx(0.55)


def test_context_precision_question_only_for_retrieval_only_rows():
    judge = FakeJudge([p(0.6), p(0.3)])
    r = PRECISION.score(Scoring(sample(answer="", reference=None), judge))
    assert r.evidence["judged_against"] == "question"
    assert all("<reference>" not in a.user and "<answer>" not in a.user for a in judge.asked("judge_chunk"))


@pytest.mark.parametrize("weights, expected", [
    ([1.0, 0.0, 1.0], (1 + 2 / 3) / 2),  # flags: the usual average precision
    ([0.0, 1.0, 1.0], (1 / 2 + 2 / 3) / 2),
    ([0.4], 0.4),  # one chunk: its probability
    ([0.0, 0.0], 0.0),
])
def test_graded_average_precision(weights, expected):
    assert average_precision(weights) == pytest.approx(expected)


def test_graded_average_precision_prefers_the_likely_chunk_first():
    assert average_precision([0.9, 0.1]) > average_precision([0.1, 0.9])


def test_a_bad_verdicts_option_names_the_valid_modes():
    with pytest.raises(ConfigError, match="faithfulness: verdicts must be one of probability, json, got 'yes'"):
        all_metrics()["faithfulness"].with_options(verdicts="yes")


def test_the_window_check_follows_the_mode():
    assert "verify_statement" in FAITH.prompts and "verify_statements" not in FAITH.prompts
    assert all_metrics()["context_precision"].with_options(verdicts="json").prompts == ("judge_chunks",)


# --- long inputs: groups of contexts, pieces of a chunk ----------------------------------------------------------


def test_contexts_too_long_for_the_window_are_judged_in_groups_and_the_highest_probability_counts():
    contexts = [" ".join(f"word{i}x{j}" for j in range(120)) for i in range(4)]
    judge = FakeJudge([Claims(claims=["First claim here."]), p(0.1), p(0.7), p(0.3), p(0.2)], n_ctx=700)
    r = FAITH.score(Scoring(sample(contexts=contexts), judge))
    asked = judge.asked("verify_statement")
    assert len(asked) > 1 and r.value == pytest.approx(max([0.1, 0.7, 0.3, 0.2][:len(asked)]))
    assert all(judge.count_tokens(a.system) + judge.count_tokens(a.user) <= 700 for a in asked)
    assert any("judged against" in w and "highest over the groups" in w for w in r.evidence["warnings"])


def test_a_chunk_too_long_for_the_window_is_judged_in_pieces():
    chunk = ". ".join(f"Sentence {i} talks about storage tier number {i}" for i in range(80)) + "."
    judge = FakeJudge(n_ctx=600)
    r = PRECISION.score(Scoring(sample(contexts=[chunk, "Short chunk about Archive."]), judge))
    asked = judge.asked("judge_chunk")
    assert len(asked) > 2 and r.scored
    assert any(w.startswith("chunk(s) 1 did not fit the judge's context window (n_ctx=600)")
               for w in r.evidence["warnings"])
