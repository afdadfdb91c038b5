"""Graded verdicts (metric option verdicts=probability): P(yes) from the judge's next-token probabilities, one item
per call. How the probabilities are read, caching, the prompts and the window splits; the metrics' scores and evidence
in both modes are tested in test_metrics.py (parametrised by mode)."""
from __future__ import annotations

import math

import pytest

from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge, Judging
from localragas.judges.base import Judge
from localragas.judges.cache import JudgeCache
from localragas.judges.yes_no import p_yes, top_from_logits, word_of
from localragas.metrics import all_metrics
from localragas.core.reply_schemas import YesNo
from localragas.prompts import judge_chunk, verify_statement
from localragas.prompts.base import ONE_WORD, YES_NO_SYSTEMS
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import ACME, graded

FAITH = all_metrics()["faithfulness"].with_options(verdicts="probability")
PRECISION = all_metrics()["context_precision"].with_options(verdicts="probability")

sample = ACME


# --- from top tokens to P(yes) -----------------------------------------------------------------------------------


@pytest.mark.parametrize("token, word", [("yes", "yes"), (" Yes", "yes"), ('"YES', "yes"), ("no", "no"),
                                         (" No.", "no"), ("是", "yes"), ("否", "no"), ("{\"", None), ("nope", None),
                                         ("", None)])
def test_word_of_pools_the_spellings_of_yes_and_no(token, word):
    assert word_of(token) == word


def test_p_yes_pools_spellings_and_normalises_over_the_two_words_to_6_digits():
    got = p_yes([("yes", math.log(0.5)), ("{\"", math.log(0.2)), (" Yes", math.log(0.1)), ("no", math.log(0.2))], "t")
    assert got == round(0.6 / 0.8, 6)
    assert p_yes([("yes", math.log(2 / 3)), ("no", math.log(1 / 3))], "t") == 0.666667


def test_p_yes_without_either_word_is_a_judge_error_naming_the_top_tokens():
    with pytest.raises(JudgeError, match=r"verify_statement: neither 'yes' nor 'no'.*'\{'"):
        p_yes([("{", -0.1), ("```", -2.0)], "verify_statement")


def test_top_from_logits_is_a_log_softmax_best_first():
    logits = [0.0, 2.0, 1.0, -1.0]
    top = top_from_logits(logits, lambda i: "abcd"[i], k=3)
    assert [t for t, _ in top] == ["b", "c", "a"]
    z = sum(math.exp(x) for x in logits)
    assert top[0][1] == pytest.approx(2.0 - math.log(z))


# --- the judge call: cache and counters --------------------------------------------------------------------------


def test_yes_no_is_cached_like_any_reply_and_counted(tmp_path):
    judge = FakeJudge(graded(0.25))
    judging = Judging(judge, cache=JudgeCache(tmp_path))
    prompt = verify_statement("Acme offers Archive.", sample.contexts)
    assert judging.p_yes(prompt) == 0.25
    assert judging.p_yes(prompt) == 0.25  # the queue is empty: this one came from the cache
    assert (judging.stats.calls, judging.stats.cache_hits, judging.stats.failed_calls) == (1, 1, 0)
    assert [c.output for c in judge.calls] == [YesNo]
    judging.cache.close()


def test_a_backend_without_token_probabilities_says_so_and_names_the_option():
    class NoProbabilities(FakeJudge):
        next_tokens = Judge.next_tokens  # the base class's: not supported

    judge = NoProbabilities()
    judging = Judging(judge)
    with pytest.raises(JudgeError, match=r"cannot give token probabilities.*METRIC.verdicts=json"):
        judging.p_yes(verify_statement("x", sample.contexts))
    assert judging.stats.failed_calls == 1


# --- prompts -----------------------------------------------------------------------------------------------------


def test_verify_statement_asks_one_word_with_the_contexts_first():
    prompt = verify_statement("Archive restores in 12 hours.", sample.contexts)
    assert prompt.name == "verify_statement" and prompt.system == YES_NO_SYSTEMS["en"]
    assert "JSON only" not in prompt.system and 'one word: "yes" or "no"' in prompt.system
    assert prompt.user.startswith('<context id="1">\n' + sample.contexts[0])
    assert prompt.user.index("</context>") < prompt.user.index("<statement>\nArchive restores in 12 hours.\n</statement>")
    assert prompt.user.endswith(ONE_WORD["en"])


def test_verify_statement_in_chinese():
    prompt = verify_statement("长城始建于秦朝。", ["长城始建于春秋战国时期。"])
    assert prompt.system == YES_NO_SYSTEMS["zh"] and prompt.user.endswith(ONE_WORD["zh"])
    assert "判断上下文是否支持下面这条陈述" in prompt.user


def test_judge_chunk_puts_the_question_first_and_one_chunk():
    prompt = judge_chunk(sample.question, sample.reference, "reference answer", sample.contexts[1])
    assert prompt.name == "judge_chunk"
    assert prompt.user.startswith(f"<question>\n{sample.question}\n</question>\n"
                                  f"<reference>\n{sample.reference}\n</reference>")
    assert prompt.user.count("<context>") == 1 and "useful for arriving at that reference answer" in prompt.user
    alone = judge_chunk(sample.question, "", "question", sample.contexts[1])
    assert "<reference>" not in alone.user and "contains information that answers the question" in alone.user


# --- the option (the metrics in both modes: test_metrics.py) ------------------------------------------------------


def test_a_bad_verdicts_option_names_the_valid_modes():
    with pytest.raises(ConfigError, match="faithfulness: verdicts must be one of probability, json, got 'yes'"):
        all_metrics()["faithfulness"].with_options(verdicts="yes")


def test_the_window_check_follows_the_mode():
    assert "verify_statement" in FAITH.prompts and "verify_statements" not in FAITH.prompts
    assert all_metrics()["context_precision"].with_options(verdicts="json").prompts == ("judge_chunks",)


# --- long inputs: groups of contexts, pieces of a chunk ----------------------------------------------------------


def test_contexts_too_long_for_the_window_are_judged_in_groups_and_the_highest_probability_counts():
    contexts = [" ".join(f"word{i}x{j}" for j in range(120)) for i in range(4)]
    judge = FakeJudge(graded(0.1, 0.7, 0.3, 0.2), n_ctx=700)
    r = FAITH.score(Scoring(sample(answer="First claim here.", contexts=contexts), judge))  # one sentence
    asked = judge.asked("verify_statement")
    assert [c.prompt.name for c in judge.calls] == ["verify_statement"] * len(asked)
    assert all("<statement>\nFirst claim here.\n</statement>" in a.user for a in asked)
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
