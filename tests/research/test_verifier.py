"""research/verifier (issue 37) on made-up signals: the statement targets, the leave-one-source-out split (FaithBench's
two files never train each other's head), a head that finds a signal P(yes) lacks, and the pieces of signals.py
that need no model (lexical overlap, per-statement labels, the statements of a row)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from research.verifier import evaluate, signals



def _write(folder: Path, stem: str, rows: int, direction: float, seed: int) -> None:
    """`rows` answers of 1-3 statements; lp_ctx_mean - lp_noctx_mean follows the label times `direction`, P(yes)
    and the hidden state are noise."""
    rng = np.random.default_rng(seed)
    recs = []
    for r in range(rows):
        label = r % 2
        n = 1 + r % 3
        for i in range(n):
            gain = direction * (1.0 if label else -1.0) + rng.normal(0, 0.3)
            recs.append({"row": f"{stem}-{r}", "i": i, "n": n, "label": label, "s_label": None,
                         "p_yes": float(rng.uniform(0.05, 0.95)), "lp_ctx_mean": gain, "lp_ctx_min": -3.0,
                         "lp_ctx_p10": -2.0, "lp_noctx_mean": 0.0, "lp_noctx_min": -3.0, "lp_noctx_p10": -2.0,
                         "uni_prec": 0.5, "bi_prec": 0.5, "n_words": 10.0})
    (folder / f"{stem}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    np.save(folder / f"{stem}.hidden.npy", rng.normal(size=(len(recs), 24)).astype(np.float16))


def test_a_block_is_kept_only_for_a_mean_gain_of_003_with_no_file_losing_more_than_002():
    assert evaluate.keeps({"a": 0.05, "b": 0.02})
    assert not evaluate.keeps({"a": 0.10, "b": -0.03})
    assert not evaluate.keeps({"a": 0.02, "b": 0.03})


def test_statement_targets_use_a_statements_own_label_else_the_answers():
    recs = [{"s_label": 0, "label": 1, "n": 3}, {"s_label": None, "label": 1, "n": 3},
            {"s_label": None, "label": 0, "n": 4}]
    y, w = evaluate.targets(recs)
    assert y.tolist() == [0, 1, 0] and w.tolist() == [1.0, 1.0, 0.25]


def test_a_head_finds_the_likelihood_signal_that_p_yes_lacks_leaving_one_source_out(tmp_path):
    for k, stem in enumerate(evaluate.STATEMENT_FILES):
        _write(tmp_path, stem, 60, 1.0, k)
    data = {s: evaluate.load(tmp_path, s) for s in evaluate.STATEMENT_FILES}
    base = evaluate.statement_lofo(data, [0], 4, 1.0, "mean")
    more = evaluate.statement_lofo(data, [0, 1], 4, 1.0, "mean")
    hidden = evaluate.statement_lofo(data, [0, 1, evaluate.HIDDEN], 4, 1.0, "mean")
    assert set(base) == set(evaluate.STATEMENT_FILES)
    for stem in data:
        assert 0.3 < base[stem]["auc"] < 0.7  # P(yes) is noise here
        assert more[stem]["auc"] > 0.95 and more[stem]["gain"] > 0.25
        assert more[stem]["gain_ci"][0] > 0  # the paired interval clears zero
        assert hidden[stem]["auc"] > 0.9  # 4 principal components of noise do not drown it


def test_faithbench_files_never_train_each_others_head(tmp_path):
    # the signal points one way in BEGIN and QAGS and the other way in both FaithBench files: a head for a FaithBench
    # file that saw the other FaithBench file would rank it right; trained on BEGIN and QAGS alone it ranks it wrong
    for k, stem in enumerate(evaluate.STATEMENT_FILES):
        _write(tmp_path, stem, 60, -1.0 if evaluate.STATEMENT_FILES[stem] == "faithbench" else 1.0, k)
    data = {s: evaluate.load(tmp_path, s) for s in evaluate.STATEMENT_FILES}
    got = evaluate.statement_lofo(data, [0, 1], 4, 1.0, "mean")
    assert got["faithfulness_faithbench"]["auc"] < 0.1 and got["context_recall_faithbench"]["auc"] < 0.1
    assert got["begin_faithfulness"]["auc"] < 0.1  # trained on QAGS (right way) and FaithBench (wrong way, more rows)


def test_signals_lexical_overlap_and_per_statement_labels():
    got = signals.lexical("The tower is in Paris.", ["The tower is in Paris, France."])
    assert got == {"uni_prec": 1.0, "bi_prec": 1.0, "n_words": 5.0}
    assert signals.lexical("Berlin has a tower.", ["The tower is in Paris."])["bi_prec"] == 0.0
    qags = {"label": {"value": 0}, "meta": {"sentence_yes_votes_of_3": [3, 1, 2]}}
    assert signals.statement_labels(qags, 3) == [1, 0, 1]
    assert signals.statement_labels({"label": {"value": 0}}, 1) == [0]
    assert signals.statement_labels({"label": {"value": 0}}, 2) == [None, None]


@pytest.mark.parametrize("kind", ["answer", "reference", "chunk"])
def test_signals_statements_of_a_row(kind):
    row = {"question": "Where is it?", "contexts": ["It is in Paris.", "Paris is in France."],
           "answer": "It is in Paris. It is old.", "reference": "It is in Paris.", "meta": {}}
    items, make = signals.items_of(kind, row)
    expected = {"answer": ["It is in Paris.", "It is old."], "reference": ["It is in Paris."],
                "chunk": row["contexts"]}[kind]
    assert items == expected
    with_ctx, bare = make(items[0], True).user, make(items[0], False).user
    assert items[0] in with_ctx and items[0] in bare
    if kind == "chunk":
        assert "Where is it?" in with_ctx and "Where is it?" not in bare
    else:
        assert "Paris is in France." in with_ctx and "Paris is in France." not in bare
