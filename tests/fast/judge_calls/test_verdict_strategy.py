"""One verdict strategy (localragas.judge_calls.verdicts): `support` and `relevance` give a number per item, by JSON
verdicts (1.0 / 0.0, Judge.generate) or graded ones (P(yes), Judge.p_yes); each metric declares its gate threshold
per mode."""
from __future__ import annotations

import pytest

from localragas.judge_calls.verdicts import VERDICTS, YES
from localragas.core.errors import JudgeError
from localragas.run.gate import default_thresholds
from localragas.judges import FakeJudge, Judging
from localragas.metrics import all_metrics
from localragas.core.reply_schemas import Verdicts, YesNo
from localragas.prompts import verify_statement
from localragas.data.schema import Sample
from localragas.judge_calls.sample_context import Scoring

SAMPLE = Sample(id="s", question="Who developed Java?", answer="Java was developed by Sun Microsystems.",
                contexts=["Java was developed by Sun Microsystems in 1995.", "Python was created by Guido van Rossum."],
                reference="Sun Microsystems developed Java.")
CLAIMS = ["Java was developed by Sun Microsystems.", "Java was developed by Oracle in 2010."]


def test_json_and_probability_support_agree_on_the_fake_judge_and_ask_their_own_calls():
    judge = FakeJudge()
    got = {name: v.support(Scoring(SAMPLE, judge), CLAIMS, SAMPLE.contexts).values for name, v in VERDICTS.items()}
    assert got["json"] == [1.0, 0.0]
    assert got["probability"][0] == 1.0 and got["probability"][1] < YES
    asked = [(c.prompt.name, c.output) for c in judge.calls]
    assert asked[:2] == [("verify_statement", YesNo)] * 2  # probability: one graded call per claim
    assert asked[2][0] == "verify_statements" and issubclass(asked[2][1], Verdicts)  # json: one call for both


def test_no_contexts_supports_nothing_and_asks_nothing():
    judge = FakeJudge()
    for v in VERDICTS.values():
        assert v.support(Scoring(SAMPLE, judge), CLAIMS, []).values == [0.0, 0.0]
    assert judge.calls == []


def test_relevance_by_either_strategy():
    judge = FakeJudge()
    target = "Sun Microsystems developed the Java language"
    for name, v in VERDICTS.items():
        got = v.relevance(Scoring(SAMPLE, judge), SAMPLE.question, target, "reference answer", SAMPLE.contexts)
        assert [p >= YES for p in got.values] == [True, False], name
    assert [c.prompt.name for c in judge.calls] == ["judge_chunk", "judge_chunk", "judge_chunks"]


def test_p_yes_on_the_fake_judge_is_a_float_recorded_and_cached_like_a_reply(tmp_path):
    from localragas.judges.cache import JudgeCache

    judge = FakeJudge([{"p_yes": 0.25, "mass": 0.9}])
    judging = Judging(judge, cache=JudgeCache(tmp_path))
    prompt = verify_statement(CLAIMS[0], SAMPLE.contexts)
    assert judging.p_yes(prompt) == 0.25
    assert judging.p_yes(prompt) == 0.25  # from the cache: the queue is empty
    assert [c.output for c in judge.calls] == [YesNo]
    assert [r["cache_hit"] for r in judging.log.records] == [False, True]
    judging.cache.close()


def test_p_yes_of_a_judge_without_token_probabilities_says_how_to_go_on():
    from localragas.judges.base import Completion, Judge

    class NoLogits(Judge):
        def complete(self, prompt, schema, output):
            return Completion(text="{}")

    with pytest.raises(JudgeError, match="verdicts=json"):
        Judging(NoLogits()).p_yes(verify_statement(CLAIMS[0], SAMPLE.contexts))


def test_each_metric_declares_its_gate_threshold_per_verdicts_mode():
    m = all_metrics()
    graded = default_thresholds(m[n] for n in ("faithfulness", "context_recall", "context_precision"))
    as_json = default_thresholds(m[n].with_options(verdicts="json")
                                 for n in ("faithfulness", "context_recall", "context_precision"))
    assert graded == {"faithfulness": 0.5, "context_recall": 0.5, "context_precision": 0.5}
    assert as_json == {"faithfulness": 0.8, "context_recall": 0.7, "context_precision": 0.65}
    assert default_thresholds([m["answer_relevancy"], m["context_relevance"]]) == {"answer_relevancy": 0.75}
