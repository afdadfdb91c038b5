"""The local sentence splitter (localragas/core/sentences.py) and context recall's `statements=sentences` option."""
from __future__ import annotations

import pytest

from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.core.sentences import sentences
from localragas.scoring import Scoring

from metrics_helpers import MODES, SUPPORT_CALL, Texts, replies


@pytest.mark.parametrize("text, expected", [
    ("Acme offers three tiers. Archive costs 3.5 dollars, e.g. per TB. Is it free? No!\nNew line",
     ["Acme offers three tiers.", "Archive costs 3.5 dollars, e.g. per TB.", "Is it free?", "No!", "New line"]),
    ("阿克米提供三种存储层。归档层在12小时内恢复数据！它免费吗？", ["阿克米提供三种存储层。", "归档层在12小时内恢复数据！", "它免费吗？"]),
    ('He said "It works." Then he left.', ['He said "It works."', "Then he left."]),
    ("One. One. — …", ["One."]),  # repeats and fragments without a word dropped
    ("", []),
    ("no end mark at all", ["no end mark at all"]),
])
def test_sentences(text, expected):
    assert sentences(text) == expected


def test_sentences_keep_every_word():
    text = "Standard is hot. Infrequent Access is cool; Archive is cold. 第三层是归档。它很便宜！"
    assert "".join(sentences(text)).replace(" ", "") == text.replace(" ", "")


QUESTION = "Which storage tiers does Acme offer?"
CONTEXTS = ["Acme offers three storage tiers: Standard, Infrequent Access and Archive."]
REFERENCE = "Acme offers three tiers. They are Standard, Infrequent Access and Archive."
sample = Texts(QUESTION, CONTEXTS, "Three tiers.", REFERENCE)
RECALL = all_metrics()["context_recall"]


@pytest.mark.parametrize("mode", MODES)
def test_context_recall_by_sentences_asks_no_extraction_and_one_verdict_per_sentence(mode):
    values = {"json": [1, 0], "probability": [0.8, 0.4]}[mode]
    judge = FakeJudge(replies(mode, values))
    r = RECALL.with_options(statements="sentences", verdicts=mode).score(Scoring(sample(), judge))
    assert not judge.asked("extract_claims")
    asked = judge.asked(SUPPORT_CALL[mode])
    assert len(asked) == len(judge.calls) == (1 if mode == "json" else 2)
    assert [s["statement"] for s in r.evidence["statements"]] == sentences(REFERENCE)
    assert r.value == pytest.approx(sum(values) / 2)
    if mode == "probability":
        assert [a.user[a.splits[0]:].count(s) for a, s in zip(asked, sentences(REFERENCE))] == [1, 1]
    else:
        assert all(s in asked[0].user for s in sentences(REFERENCE))


def test_context_recall_statements_option_is_checked():
    assert RECALL.options["statements"] == "claims" and "extract_claims" in RECALL.prompts
    assert RECALL.with_options(statements="sentences").prompts == ("verify_statement",)
    with pytest.raises(ConfigError, match="statements must be one of claims, sentences, hybrid, got 'words'"):
        RECALL.with_options(statements="words")
