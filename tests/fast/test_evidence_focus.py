"""The `evidence=focused` option of faithfulness and context recall (asking/focus.py): each statement judged against
only the context sentences most similar to it (top 3, one neighbour each side), by the sample's embedder."""
from __future__ import annotations

import pytest

from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.scoring import Scoring

from metrics_helpers import StubEmbedder, Texts

FAITH = all_metrics()["faithfulness"].with_options(statements="sentences", evidence="focused")
RECALL = all_metrics()["context_recall"].with_options(statements="sentences", evidence="focused")
C1 = ["S0 alpha.", "S1 beta.", "S2 gamma.", "S3 delta.", "S4 epsilon."]
C2 = ["T0 zeta.", "T1 eta.", "T2 theta."]
UNITS = C1 + C2


def onehot(i: int) -> list[float]:
    return [1.0 if k == i else 0.0 for k in range(len(UNITS))]


def weights(**w: float) -> list[float]:
    """A statement's vector: its cosine with each context sentence is proportional to the weight named after it."""
    return [w.get(u.split()[0], 0.0) for u in UNITS]


EMBEDDER = {**{u: onehot(i) for i, u in enumerate(UNITS)},
            "Claim one.": weights(S4=0.9, T0=0.8, S0=0.7, S2=0.1),
            "Claim two.": weights(T2=0.9, S2=0.5, S1=0.3)}
sample = Texts("What?", [" ".join(C1), " ".join(C2)], "Claim one. Claim two.", "Claim one.")


def contexts_asked(prompt) -> str:
    return prompt.user[:prompt.splits[0]]


def test_each_statement_is_judged_against_its_closest_sentences_and_their_neighbours():
    judge, embedder = FakeJudge([{"p_yes": 0.9, "mass": 1.0}, {"p_yes": 0.2, "mass": 1.0}]), StubEmbedder(EMBEDDER)
    r = FAITH.score(Scoring(sample(), judge, embedder))
    x, y = judge.asked("verify_statement")
    assert '<context id="1">\nS0 alpha. S1 beta. S3 delta. S4 epsilon.\n</context>' in contexts_asked(x)
    assert '<context id="2">\nT0 zeta. T1 eta.\n</context>' in contexts_asked(x)
    assert "gamma" not in contexts_asked(x) and "theta" not in contexts_asked(x)
    assert '<context id="1">\nS0 alpha. S1 beta. S2 gamma. S3 delta.\n</context>' in contexts_asked(y)
    assert '<context id="2">\nT1 eta. T2 theta.\n</context>' in contexts_asked(y)
    assert [c["evidence_sentences"] for c in r.evidence["claims"]] == [
        [[1, 1], [1, 2], [1, 4], [1, 5], [2, 1], [2, 2]], [[1, 1], [1, 2], [1, 3], [1, 4], [2, 2], [2, 3]]]
    assert r.value == pytest.approx(0.55)


def test_context_sentences_are_embedded_once_per_sample():
    judge, embedder = FakeJudge(), StubEmbedder(EMBEDDER)
    ctx = Scoring(sample(), judge, embedder)
    FAITH.score(ctx)
    RECALL.score(ctx)
    assert [batch for batch in embedder.seen if "S0 alpha." in batch] == [UNITS]
    assert [batch for batch in embedder.seen if "S0 alpha." not in batch] == [["Claim one.", "Claim two."],
                                                                              ["Claim one."]]


def test_a_short_context_is_kept_whole():
    judge = FakeJudge()
    embedder = StubEmbedder({"Only one.": [1.0, 0.0], "Claim one.": [0.6, 0.8], "Claim two.": [0.0, 1.0]})
    FAITH.score(Scoring(sample(contexts=["Only one."]), judge, embedder))
    assert all('<context id="1">\nOnly one.\n</context>' in contexts_asked(p) for p in judge.asked("verify_statement"))


def test_focus_needs_an_embedder_and_graded_verdicts():
    assert FAITH.uses_embedder and RECALL.uses_embedder and not all_metrics()["faithfulness"].uses_embedder
    with pytest.raises(ConfigError, match="evidence=focused .*needs an embedder"):
        FAITH.score(Scoring(sample(), FakeJudge(), None))
