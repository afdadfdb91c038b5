"""The `baseline=content_free` option of faithfulness and context recall (contextual calibration): the support
question also asked about the content-free statements (prompts/verdicts.py NULL_STATEMENTS) against the same contexts,
once per sample, and each statement's support P(yes) p adjusted to sigmoid(logit(p) - logit(p0))."""
from __future__ import annotations

import math
import re

import pytest

from localragas import evaluate
from localragas.asking.ways import CLIP, Way
from localragas.core.outputs import YesNo
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts.verdicts import NULL_STATEMENTS
from localragas.scoring import Scoring

from calibration_helpers import calibration_file
from cli_helpers import cli, write_jsonl
from metrics_helpers import StubEmbedder, Texts

FAITH = all_metrics()["faithfulness"].with_options(statements="sentences", baseline="content_free")
RECALL = all_metrics()["context_recall"].with_options(statements="sentences", baseline="content_free")
CONTEXTS = ["Acme offers three storage tiers. Archive is the cheapest."]
EN = Texts("Which tiers?", CONTEXTS, "Acme offers three tiers. Archive is free.", "Acme offers three tiers.")
ZH = Texts("有哪些存储层？", ["阿克米提供三种存储层。"], "阿克米提供三种存储层。归档层免费。", "阿克米提供三种存储层。")
# P(yes) of the support question per statement; the second wording answers half of it, the contradiction question 0.1
P = {"Acme offers three tiers.": 0.9, "Archive is free.": 0.3, "N/A": 0.7, "It is so.": 0.5,
     "阿克米提供三种存储层。": 0.8, "归档层免费。": 0.2, "不适用": 0.6, "是这样。": 0.4}


def statement_of(prompt) -> str:
    """The statement a one-word question asks about (after its shared prefix, so the worked examples don't count)."""
    return re.search(r"<statement>\n(.*?)\n</statement>", prompt.user[prompt.splits[0]:], re.S).group(1)


def scripted(prompt, output):
    assert output is YesNo
    p = P[statement_of(prompt)]
    if prompt.name.startswith("contradict_statement"):
        p = 0.1
    elif prompt.name.startswith("verify_statement_reworded"):
        p = p / 2
    return {"p_yes": p, "mass": 1.0}


def formula(p: float, p0: float) -> float:
    clip = lambda x: min(max(x, CLIP), 1 - CLIP)  # noqa: E731
    logit = lambda x: math.log(clip(x) / (1 - clip(x)))  # noqa: E731
    return 1 / (1 + math.exp(-(logit(p) - logit(p0))))


def test_the_nulls_are_asked_once_per_sample_after_the_statements_with_their_prefix():
    judge = FakeJudge(responder=scripted)
    ctx = Scoring(EN(), judge)
    FAITH.score(ctx)
    asked = [statement_of(c.prompt) for c in judge.calls]
    assert asked == ["Acme offers three tiers.", "Archive is free.", "N/A", "It is so."]
    assert {c.prompt.name for c in judge.calls} == {"verify_statement"}
    prefixes = {c.prompt.user[:c.prompt.splits[0]] for c in judge.calls}
    assert len(prefixes) == 1 and CONTEXTS[0] in prefixes.pop()  # the contexts' prefix the statements share
    RECALL.score(ctx)  # the same sample and contexts: the reference's statement only, the nulls not asked again
    assert [statement_of(c.prompt) for c in judge.calls[4:]] == ["Acme offers three tiers."]


def test_the_score_is_the_statements_p_yes_with_the_nulls_divided_out():
    judge = FakeJudge(responder=scripted)
    r = FAITH.score(Scoring(EN(), judge))
    p0 = (0.7 + 0.5) / 2
    expected = [formula(0.9, p0), formula(0.3, p0)]
    assert r.value == pytest.approx(sum(expected) / 2)
    claims = r.evidence["claims"]
    assert [c["p_unadjusted"] for c in claims] == [0.9, 0.3]
    assert [c["p_null"] for c in claims] == [0.6, 0.6]
    assert [c["p_supported"] for c in claims] == [round(e, 4) for e in expected]
    assert [c["supported"] for c in claims] == [True, False] and r.evidence["calibrated"] is False


def test_the_adjustment_clips_and_keeps_the_plain_score_without_a_baseline():
    way = Way(baseline="content_free")
    assert way.score([1.0], 0.0)[0] == pytest.approx(formula(1 - CLIP, CLIP))
    assert way.score([0.6], 0.6)[0] == pytest.approx(0.5)  # no more "yes" than for "N/A": no evidence either way
    assert way.score([0.3]) == (0.3, {})  # no p0: the plain P(yes), nothing added to the evidence
    assert Way().null_prompts(CONTEXTS, "en") == []


def test_every_way_combined_with_the_baseline():
    """question=both, shots=3, phrasings=2: each null asked in both support wordings with the examples (never the
    contradiction question); p0 the mean of the four, adjusting the support P(yes) before it meets P(contradicted)."""
    judge = FakeJudge(responder=scripted)
    metric = FAITH.with_options(question="both", shots=3, phrasings=2)
    r = metric.score(Scoring(EN(answer="Acme offers three tiers."), judge))
    assert [(c.prompt.name, statement_of(c.prompt)) for c in judge.calls] == [
        ("verify_statement_3shot", "Acme offers three tiers."),
        ("verify_statement_reworded_3shot", "Acme offers three tiers."),
        ("contradict_statement_3shot", "Acme offers three tiers."),
        ("verify_statement_3shot", "N/A"), ("verify_statement_reworded_3shot", "N/A"),
        ("verify_statement_3shot", "It is so."), ("verify_statement_reworded_3shot", "It is so.")]
    p0 = (0.7 + 0.35 + 0.5 + 0.25) / 4
    support = formula((0.9 + 0.45) / 2, p0)
    [claim] = r.evidence["claims"]
    assert claim["p_phrasings"] == [0.9, 0.45] and claim["p_unadjusted"] == 0.675 and claim["p_null"] == 0.45
    assert claim["p_supported_only"] == round(support, 4) and claim["p_contradicted"] == 0.1
    assert r.value == pytest.approx((support + 1 - 0.1) / 2)
    assert metric.graded_family == "verify_statement:question=both,shots=3,phrasings=2,baseline=content_free"


def test_focused_evidence_asks_the_nulls_against_each_statements_own_sentences():
    first = ["Acme offers three storage tiers.", "Standard is the default.", "Infrequent access costs less."]
    second = ["Archive is the cheapest.", "Archive retrieval takes hours.", "Archive has a minimum term."]
    vectors = {s: [1.0, 0.01 * i] for i, s in enumerate(first)} | {s: [0.01 * i, 1.0] for i, s in enumerate(second)}
    vectors |= {"Acme offers three tiers.": [1.0, 0.1], "Archive is free.": [0.1, 1.0]}
    judge = FakeJudge(responder=scripted)
    sample = EN(contexts=[" ".join(first), " ".join(second)])
    FAITH.with_options(evidence="focused").score(Scoring(sample, judge, StubEmbedder(vectors)))
    assert [statement_of(c.prompt) for c in judge.calls] == ["Acme offers three tiers.", "N/A", "It is so.",
                                                             "Archive is free.", "N/A", "It is so."]
    prefixes = [c.prompt.user[:c.prompt.splits[0]] for c in judge.calls]
    assert prefixes[0:3] == [prefixes[0]] * 3 and prefixes[3:6] == [prefixes[3]] * 3 and prefixes[0] != prefixes[3]
    assert first[0] in prefixes[0] and second[0] in prefixes[3]
    shared = FakeJudge(responder=scripted)  # both statements focused on the same sentences: the nulls asked once
    FAITH.with_options(evidence="focused").score(Scoring(EN(), shared, StubEmbedder(vectors | {
        "Archive is the cheapest.": [0.0, 1.0]})))
    assert [statement_of(c.prompt) for c in shared.calls] == ["Acme offers three tiers.", "N/A", "It is so.",
                                                              "Archive is free."]


def test_groups_of_contexts_get_their_own_nulls_after_the_statements():
    contexts = [" ".join(f"word{i}x{j}" for j in range(120)) for i in range(4)]
    judge = FakeJudge(responder=lambda prompt, output: {"p_yes": 0.5, "mass": 1.0}, n_ctx=700)
    r = FAITH.score(Scoring(EN(answer="First claim here.", contexts=contexts), judge))
    asked = [statement_of(c.prompt) for c in judge.calls]
    groups = asked.count("First claim here.")
    assert groups > 1 and asked[:groups] == ["First claim here."] * groups
    assert asked[groups:] == ["N/A", "It is so."] * groups
    assert all(judge.count_tokens(c.prompt.system) + judge.count_tokens(c.prompt.user) <= 700 for c in judge.calls)
    assert r.value == pytest.approx(0.5) and r.evidence["claims"][0]["p_null"] == 0.5


def test_a_chinese_sample_asks_the_chinese_nulls():
    judge = FakeJudge(responder=scripted)
    r = FAITH.score(Scoring(ZH(), judge))
    assert [statement_of(c.prompt) for c in judge.calls][-2:] == list(NULL_STATEMENTS["zh"]) == ["不适用", "是这样。"]
    assert not any(statement_of(c.prompt) in NULL_STATEMENTS["en"] for c in judge.calls)
    assert [c["p_null"] for c in r.evidence["claims"]] == [0.5, 0.5]
    assert r.value == pytest.approx((formula(0.8, 0.5) + formula(0.2, 0.5)) / 2)


def test_no_contexts_asks_nothing():
    judge = FakeJudge(responder=scripted)
    assert FAITH.score(Scoring(EN(contexts=[]), judge)).value == 0.0 and judge.calls == []


def test_the_family_is_named_so_a_map_of_the_plain_question_is_not_applied(tmp_path):
    assert FAITH.graded_family == "verify_statement:baseline=content_free"
    assert FAITH.with_options(shots=3).graded_family == "verify_statement:shots=3,baseline=content_free"
    assert FAITH.prompts == ("verify_statement",)  # the nulls are support questions of the same family
    cal = calibration_file(tmp_path / "c.json")
    report = evaluate([EN()], metrics=["faithfulness", "context_recall"], judge=FakeJudge(responder=scripted),
                      judge_options={"calibration": cal}, cache=False, progress=False, gate=False,
                      metric_options={"faithfulness": {"statements": "sentences", "baseline": "content_free"},
                                      "context_recall": {"statements": "sentences"}})
    assert report.meta["uncalibrated"] == ["faithfulness"]
    assert report.meta["thresholds"] == {"faithfulness": 0.50, "context_recall": 0.65}
    faith = report.samples[0].metrics["faithfulness"]
    assert faith.evidence["calibrated"] is False
    assert [c["p_supported"] for c in faith.evidence["claims"]] == [c["p_supported_raw"]
                                                                   for c in faith.evidence["claims"]]
    assert report.samples[0].metrics["context_recall"].evidence["calibrated"] is True


def test_the_terminal_says_the_judge_is_uncalibrated_for_it(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [EN().model_dump(exclude_none=True)])
    cal = calibration_file(tmp_path / "c.json")
    common = ("eval", data, "--judge", "fake", "--judge-option", f"calibration={cal}", "--no-progress", "--no-cache",
              "-m", "faithfulness", "--no-gate")
    r = cli(*common, "--metric-option", "faithfulness.baseline=content_free")
    assert r.exit_code == 0, r.output
    assert "judge fake is uncalibrated for faithfulness" in " ".join(r.output.split())
    assert "uncalibrated" not in cli(*common).output
