"""The local sentence splitter (localragas/core/sentences.py) and context recall's `statements=sentences` option."""
from __future__ import annotations

import pytest

from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.core.sentences import _ABBREVIATIONS, _BEFORE_NUMBER, _OPENERS, sentences
from localragas.judge_calls.sample_context import Scoring

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


@pytest.mark.parametrize("text, expected", [
    # a period after an initial or a dotted acronym goes on (FaithBench: "Joe R." was judged as a statement)
    ("Joe R. Lansdale wrote it.", ["Joe R. Lansdale wrote it."]),
    ("J. K. Rowling and J.K. Rowling are one.", ["J. K. Rowling and J.K. Rowling are one."]),
    ("He joined the U.S. Army in 1990. He left.", ["He joined the U.S. Army in 1990.", "He left."]),
    ("The U.K. Parliament met. It voted.", ["The U.K. Parliament met.", "It voted."]),
    # ... unless a common sentence opener follows
    ("He moved to the U.S. The next year he left.", ["He moved to the U.S.", "The next year he left."]),
    ("I chose plan B. Then it failed.", ["I chose plan B.", "Then it failed."]),
    # ... or a label word comes before the letter: a label, not an initial
    ("Pick Option C. Costs are lower there.", ["Pick Option C.", "Costs are lower there."]),
    ("See Appendix A. Tables follow. Take vitamin C. Mark agreed.",
     ["See Appendix A.", "Tables follow.", "Take vitamin C.", "Mark agreed."]),
    ("The plan was written by Anne C. Lee. She won.", ["The plan was written by Anne C. Lee.", "She won."]),
    # titles and the listed abbreviations go on (FaithBench: "Mr." was judged as a statement)
    ("Mr. Mole was installed as favourite. He won.", ["Mr. Mole was installed as favourite.", "He won."]),
    ("Dr. Smith met Prof. X and Mrs. Ms. Gen. Lt. Rev. Jones in St. Louis.",
     ["Dr. Smith met Prof. X and Mrs. Ms. Gen. Lt. Rev. Jones in St. Louis."]),
    ("They climbed Mt. Everest from Ft. Worth, see Vol. II, Fig. 2.", ["They climbed Mt. Everest from Ft. Worth, see "
                                                                       "Vol. II, Fig. 2."]),
    ("It was Smith vs. Jones. See e.g. Paris, i.e. Rome.", ["It was Smith vs. Jones.", "See e.g. Paris, i.e. Rome."]),
    # No, p, pp and months go on only before a digit: "No." is also a one-word answer
    ("He lives at No. 10 since Sept. 5, see pp. 3-5, p. 7.", ["He lives at No. 10 since Sept. 5, see pp. 3-5, p. 7."]),
    ("No. A bucket must be empty.", ["No.", "A bucket must be empty."]),
    ("It snowed in Jan. The roads closed.", ["It snowed in Jan.", "The roads closed."]),
    # abbreviations that often end a sentence, and case-sensitivity, are left to the ordinary rule
    ("Shares of Acme Inc. Rose today.", ["Shares of Acme Inc.", "Rose today."]),
    ("Apples, pears, etc. The shop closed. Acme Co. Ltd. Corp. Martin Luther King Jr. Spoke.",
     ["Apples, pears, etc.", "The shop closed.", "Acme Co.", "Ltd.", "Corp.", "Martin Luther King Jr.", "Spoke."]),
    ("Call me at 5 p.m. Tomorrow works.", ["Call me at 5 p.m.", "Tomorrow works."]),
    ("He said MR. Smith and DR. Who.", ["He said MR.", "Smith and DR.", "Who."]),
    # a line break always ends a sentence
    ("Dear Mr.\nSmith wrote.", ["Dear Mr.", "Smith wrote."]),
    # an ASCII ? or ! ends one only before whitespace (and no lower-case letter), the end, or Chinese text
    ('"Can I?", he asked. "Why?" she said. Wow!, he said.',
     ['"Can I?", he asked.', '"Why?" she said.', "Wow!, he said."]),
    ('Asked "Can I delete it?", the answer is no.', ['Asked "Can I delete it?", the answer is no.']),
    ("Really?! Yes! Sure?", ["Really?!", "Yes!", "Sure?"]),
    ("真的吗?是的!很好。", ["真的吗?", "是的!", "很好。"]),
    # full-width 。！？ end one with no space after, closing quotes kept with it
    ("他说：“好。”然后走了！真的？是的。", ["他说：“好。”", "然后走了！", "真的？", "是的。"]),
])
def test_sentence_ends_and_abbreviations(text, expected):
    assert sentences(text) == expected


def test_every_listed_abbreviation():
    for word in _ABBREVIATIONS:
        assert sentences(f"He saw {word}. Smith there.") == [f"He saw {word}. Smith there."], word
        assert sentences(f"He saw {word}. The end.") == [f"He saw {word}.", "The end."], word
    for word in _BEFORE_NUMBER:
        assert sentences(f"He saw {word}. 5 there.") == [f"He saw {word}. 5 there."], word
        assert sentences(f"He saw {word}. Smith there.") == [f"He saw {word}.", "Smith there."], word
    assert all(len(w) > 1 for w in _OPENERS)  # an initial before another ("J. A. Smith") is a name


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
    assert RECALL.options.statements == "claims" and "extract_claims" in RECALL.prompts
    assert RECALL.with_options(statements="sentences").prompts == ("verify_statement",)
    with pytest.raises(ConfigError, match="statements must be one of claims, sentences, got 'words'"):
        RECALL.with_options(statements="words")
