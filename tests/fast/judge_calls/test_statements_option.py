"""The `statements` option of faithfulness and context recall (judge_calls/statements.py): claims or sentences,
on English and Chinese text: what the judge is asked in each mode and what is scored."""
from __future__ import annotations

from pathlib import Path

import pytest

from localragas.judge_calls.statements import STATEMENT_MODES
from localragas.judge_calls.support import QUESTIONS
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import MODES, SUPPORT_CALL, Texts, graded, replies

FAITH = all_metrics()["faithfulness"]
RECALL = all_metrics()["context_recall"]

SHORT = "Acme offers three tiers."
LONG = ("Archive, the cheapest of the tiers that Acme sells to its business customers, restores the data "
        "within twelve hours and costs less than one dollar per terabyte each month for every stored file.")
ZH_SHORT = "阿克米提供三种存储层。"
ZH_LONG = ("归档层是阿克米向企业客户出售的各种存储层中最便宜的一种，它会在十二小时内恢复客户的数据，"
           "而且每个月每太字节的存储费用不到一美元，适合长期保存很少读取的备份文件和历史档案资料。")
CONTEXTS = ["Acme offers three storage tiers: Standard, Infrequent Access and Archive."]
sample = Texts("Which tiers does Acme offer?", CONTEXTS, f"{SHORT} {LONG}", f"{SHORT} {LONG}")


def items_asked(judge: FakeJudge) -> list[str]:
    """The item part (after the shared contexts) of each graded support prompt asked."""
    return [p.user[p.splits[0]:] for p in judge.asked("verify_statement")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer, parts", [(f"{SHORT} {LONG}", [SHORT, LONG]),
                                           (ZH_SHORT + ZH_LONG, [ZH_SHORT, ZH_LONG])])
def test_faithfulness_by_sentences_asks_no_extraction_and_one_verdict_per_sentence(answer, parts, mode):
    values = {"json": [1, 0], "probability": [0.9, 0.3]}[mode]
    judge = FakeJudge(replies(mode, values))
    r = FAITH.with_options(statements="sentences", verdicts=mode).score(Scoring(sample(answer=answer), judge))
    assert not judge.asked("extract_claims")
    assert [c.prompt.name for c in judge.calls] == [SUPPORT_CALL[mode]] * (1 if mode == "json" else 2)
    assert [c["claim"] for c in r.evidence["claims"]] == parts
    assert r.value == pytest.approx(sum(values) / 2)
    if mode == "json":
        assert all(p in judge.calls[0].prompt.user for p in parts)
    else:
        asked = items_asked(judge)
        assert len(asked) == 2 and all(p in a for p, a in zip(parts, asked))


def test_faithfulness_default_is_the_answers_sentences_with_no_extraction_call():
    judge = FakeJudge(graded(0.9, 0.3))
    r = FAITH.score(Scoring(sample(answer=f"{SHORT} {LONG}"), judge))
    assert FAITH.options.statements == "sentences" and FAITH.prompts == ("verify_statement",)
    assert not judge.asked("extract_claims")
    assert [c.prompt.name for c in judge.calls] == ["verify_statement"] * 2  # one per sentence of the answer
    asked = items_asked(judge)
    assert SHORT in asked[0] and LONG not in asked[0] and LONG in asked[1]
    assert all(CONTEXTS[0] in p.user for p in judge.asked("verify_statement"))
    assert [c["claim"] for c in r.evidence["claims"]] == [SHORT, LONG]  # the evidence key stays claims
    assert r.value == pytest.approx(0.6)


def test_context_recall_default_is_the_judges_claims():
    judge = FakeJudge([{"claims": ["Acme offers three tiers."]}, *graded(1.0)])
    RECALL.score(Scoring(sample(), judge))
    assert RECALL.options.statements == "claims" and len(judge.asked("extract_claims")) == 1
    assert f"{SHORT} {LONG}" in judge.asked("extract_claims")[0].user


@pytest.mark.parametrize("metric", [FAITH, RECALL])
def test_statements_option_prompts_and_errors(metric):
    assert metric.with_options(statements="sentences").prompts == ("verify_statement",)
    assert metric.with_options(statements="claims").prompts == ("extract_claims", "verify_statement")
    with pytest.raises(ConfigError, match=f"{metric.name}: statements must be one of claims, sentences, "
                                          "got 'words' .*sentences: the text's sentences"):
        metric.with_options(statements="words")


def test_every_metric_option_is_documented():
    doc = (Path(__file__).parents[3] / "docs" / "metrics.md").read_text(encoding="utf-8")
    options = doc[doc.index("## Metric options"):]
    missing = [f"{n}.{k}" for n, m in all_metrics().items() for k in dict(m.options) if f"`{n}.{k}`" not in options]
    assert not missing
    for values in (STATEMENT_MODES, QUESTIONS):
        assert all(f"`{v}`" in options for v in values)
