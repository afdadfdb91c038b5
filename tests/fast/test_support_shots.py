"""The `shots=3` option of faithfulness and context recall: the hand-written worked examples
(prompts/support_examples.py) before the contexts of each graded support (and contradiction) question."""
from __future__ import annotations

import pytest

from localragas.asking import check_window
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts.support_examples import EXAMPLES
from localragas.scoring import Scoring

from metrics_helpers import Texts

FAITH = all_metrics()["faithfulness"].with_options(statements="sentences", shots="3")  # as --metric-option gives it
RECALL = all_metrics()["context_recall"]
EN = Texts("Which tiers?", ["Acme offers three storage tiers."], "Acme offers three tiers. Archive is free.", "")
ZH = Texts("有哪些存储层？", ["阿克米提供三种存储层。"], "阿克米提供三种存储层。归档层免费。", "")


@pytest.mark.parametrize("sample, lang", [(EN, "en"), (ZH, "zh")])
def test_the_examples_come_before_the_contexts_in_the_shared_prefix(sample, lang):
    judge = FakeJudge()
    FAITH.score(Scoring(sample(), judge))
    asked = judge.asked("verify_statement_3shot")
    assert len(asked) == 2 and not judge.asked("verify_statement")
    for p in asked:
        shared = p.user[:p.splits[0]]
        where = [shared.index(e.statement) for e in EXAMPLES[lang]]
        assert where == sorted(where) and where[-1] < shared.index('<context id="1">')
    assert asked[0].user[:asked[0].splits[0]] == asked[1].user[:asked[1].splits[0]]  # one prefix per sample
    assert FAITH.options["shots"] == 3


def test_the_examples_answer_the_question_asked():
    judge = FakeJudge()
    FAITH.with_options(question="both").score(Scoring(EN(), judge))
    support, contradict = (c.prompt.user for c in judge.calls[0:2])
    assert [judge.calls[0].prompt.name, judge.calls[1].prompt.name] == ["verify_statement_3shot",
                                                                       "contradict_statement_3shot"]
    assert [a.split("\n")[0] for a in support.split("Answer: ")[1:4]] == ["yes", "no", "no"]
    assert [a.split("\n")[0] for a in contradict.split("Answer: ")[1:4]] == ["no", "no", "yes"]


def test_shots_are_checked_against_the_window_and_options():
    assert FAITH.prompts == ("verify_statement_3shot",)
    assert RECALL.with_options(shots=3, question="both").prompts == ("extract_claims", "verify_statement_3shot",
                                                                      "contradict_statement_3shot")
    assert RECALL.options["shots"] == 0 and "verify_statement" in RECALL.prompts
    with pytest.raises(ConfigError, match="verify_statement_3shot prompt needs"):
        check_window(FakeJudge(n_ctx=600), FAITH.prompts)
    check_window(FakeJudge(n_ctx=600), ("verify_statement",))  # the examples are what does not fit
