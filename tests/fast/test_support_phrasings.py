"""The `phrasings=2` option of faithfulness (and context recall): the support question asked in two wordings
(verify_statement, verify_statement_reworded), the item's score the mean of the two P(yes); and the ways combined."""
from __future__ import annotations

import pytest

from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts import verify_statement, verify_statement_reworded
from localragas.scoring import Scoring

from metrics_helpers import StubEmbedder, Texts, graded

FAITH = all_metrics()["faithfulness"]
sample = Texts("Which tiers?", ["Acme offers three storage tiers. Archive is the cheapest."],
                 "Acme offers three tiers. Archive is free.", "Acme offers three tiers.")


def test_two_phrasings_are_asked_per_statement_and_averaged():
    judge = FakeJudge(graded(0.8, 0.6, 0.3, 0.1))
    r = FAITH.with_options(statements="sentences", phrasings=2).score(Scoring(sample(), judge))
    assert [c.prompt.name for c in judge.calls] == ["verify_statement", "verify_statement_reworded"] * 2
    first, second = judge.calls[0].prompt, judge.calls[1].prompt
    assert first.user[first.splits[0]:] == second.user[second.splits[0]:]  # the same statement, other instructions
    assert first.user[:first.splits[0]] != second.user[:second.splits[0]]
    assert [c["p_phrasings"] for c in r.evidence["claims"]] == [[0.8, 0.6], [0.3, 0.1]]
    assert [c["p_supported"] for c in r.evidence["claims"]] == [pytest.approx(0.7), pytest.approx(0.2)]
    assert r.value == pytest.approx(0.45)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_second_wording_has_the_layout_of_the_first(lang):
    a, b = verify_statement("S.", ["C."], lang=lang), verify_statement_reworded("S.", ["C."], lang=lang)
    assert a.user[:a.user.index("\n\n")] == b.user[:b.user.index("\n\n")] and a.system == b.system
    assert verify_statement_reworded("S.", ["C."], lang=lang, shots=3).name == "verify_statement_reworded_3shot"


def test_every_way_combined():
    """statements=sentences, evidence=focused, question=both, shots=3, phrasings=2 at once: per statement two support
    wordings and one contradiction question, each with the examples, against the statement's focused sentences."""
    vectors = {"Acme offers three storage tiers.": [1.0, 0.0], "Archive is the cheapest.": [0.0, 1.0],
               "Acme offers three tiers.": [1.0, 0.1], "Archive is free.": [0.1, 1.0]}
    metric = all_metrics()["context_recall"].with_options(statements="sentences", evidence="focused",
                                                          question="both", shots=3, phrasings=2)
    assert metric.prompts == ("verify_statement_3shot", "verify_statement_reworded_3shot", "contradict_statement_3shot")
    judge = FakeJudge(graded(0.9, 0.7, 0.2))
    r = metric.score(Scoring(sample(), judge, StubEmbedder(vectors)))
    assert [c.prompt.name for c in judge.calls] == list(metric.prompts)
    assert all("Example 3" in c.prompt.user and "Archive is the cheapest." in c.prompt.user for c in judge.calls)
    [item] = r.evidence["statements"]
    assert item["p_phrasings"] == [0.9, 0.7] and item["p_supported_only"] == 0.8 and item["p_contradicted"] == 0.2
    assert item["evidence_sentences"] == [[1, 1], [1, 2]] and r.value == pytest.approx(0.8)
