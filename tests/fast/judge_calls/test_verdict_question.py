"""The `question=both` option of faithfulness and context recall: the support question and the contradiction question
(prompts/verdicts.py) asked for each statement, the score (P(supported) + 1 - P(contradicted)) / 2."""
from __future__ import annotations

import pytest

from localragas.judge_calls import check_window
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts import contradict_statement, verify_statement
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import Texts, graded

FAITH = all_metrics()["faithfulness"]
RECALL = all_metrics()["context_recall"]
CONTEXTS = ["Acme offers three storage tiers: Standard, Infrequent Access and Archive."]
sample = Texts("Which tiers?", CONTEXTS, "Acme offers three tiers. Archive is free.", "Acme offers three tiers.")


def test_both_asks_support_then_contradiction_per_statement_and_combines_them():
    judge = FakeJudge(graded(0.9, 0.1, 0.4, 0.8))
    r = FAITH.with_options(statements="sentences", question="both").score(Scoring(sample(), judge))
    assert [c.prompt.name for c in judge.calls] == ["verify_statement", "contradict_statement"] * 2
    verify, contradict = judge.calls[0].prompt, judge.calls[1].prompt
    assert "contradict the statement" in contradict.user and "contradict the statement" not in verify.user
    assert all("Acme offers three tiers." in c.prompt.user[c.prompt.splits[0]:] for c in judge.calls[:2])
    assert [c["p_supported"] for c in r.evidence["claims"]] == [pytest.approx(0.9), pytest.approx(0.3)]
    assert [(c["p_supported_only"], c["p_contradicted"]) for c in r.evidence["claims"]] == [(0.9, 0.1), (0.4, 0.8)]
    assert [c["supported"] for c in r.evidence["claims"]] == [True, False]
    assert r.value == pytest.approx(0.6)


def test_both_combines_with_claims_and_context_recall():
    judge = FakeJudge([{"claims": ["Acme offers three tiers."]}, *graded(0.6, 0.0)])
    r = RECALL.with_options(question="both").score(Scoring(sample(), judge))
    assert [c.prompt.name for c in judge.calls] == ["extract_claims", "verify_statement", "contradict_statement"]
    assert r.value == pytest.approx(0.8) and r.evidence["statements"][0]["p_contradicted"] == 0.0


@pytest.mark.parametrize("lang, words", [("en", "contradict"), ("zh", "矛盾")])
def test_contradiction_prompt_has_the_layout_of_the_support_prompt(lang, words):
    c, v = contradict_statement("S.", CONTEXTS, lang=lang), verify_statement("S.", CONTEXTS, lang=lang)
    assert words in c.user[:c.splits[0]] and c.system == v.system
    assert c.user[c.splits[0]:] == v.user[v.splits[0]:]  # the same statement and reply line after the shared prefix
    assert c.user.startswith(v.user[:v.user.index("\n\n")])  # the contexts first


def test_both_is_checked_against_the_window_and_refused_with_json_verdicts():
    metric = FAITH.with_options(question="both")
    assert metric.prompts == ("verify_statement", "contradict_statement")  # the answer's sentences: no extraction
    assert FAITH.prompts == ("verify_statement",)
    assert RECALL.with_options(question="both").prompts == ("extract_claims", "verify_statement",
                                                            "contradict_statement")
    with pytest.raises(ConfigError, match="contradict_statement prompt needs"):
        check_window(FakeJudge(n_ctx=300), ("contradict_statement",))


def test_both_in_groups_of_contexts_keeps_the_best_group_with_its_two_probabilities():
    contexts = [" ".join(f"word{i}x{j}" for j in range(120)) for i in range(4)]
    replies = [0.2, 0.9, 0.8, 0.1, 0.5, 0.5, 0.1, 0.0]  # per group: P(supported), P(contradicted)
    judge = FakeJudge(graded(*replies), n_ctx=700)
    r = FAITH.with_options(question="both").score(Scoring(sample(answer="First claim here.", contexts=contexts), judge))
    n = len(judge.asked("verify_statement"))
    assert n > 1 and len(judge.asked("contradict_statement")) == n
    assert all(judge.count_tokens(c.prompt.system) + judge.count_tokens(c.prompt.user) <= 700 for c in judge.calls)
    per_group = [((s + 1 - c) / 2, s, c) for s, c in zip(replies[0:2 * n:2], replies[1:2 * n:2])]
    best = max(per_group, key=lambda g: g[0])
    claim = r.evidence["claims"][0]
    assert r.value == pytest.approx(best[0]) and (claim["p_supported_only"], claim["p_contradicted"]) == best[1:]
