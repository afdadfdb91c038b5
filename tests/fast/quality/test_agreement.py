"""Agreement figures of `localragas calibrate` on small cases computed by hand; intervals seeded and bracketing."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from localragas.quality.agreement import (
    average_ranks,
    balanced_accuracy,
    best_balanced_accuracy,
    best_threshold,
    binary_agreement,
    bootstrap_statistic,
    figure_gain,
    graded_agreement,
    pair_outcomes,
    pairwise_agreement,
    roc_auc,
    spearman,
)
from localragas.run.stats import bootstrap_ci

# good/bad labels with tied scores across and within the classes
Y = [1, 1, 0, 0, 1, 0]
S = [0.9, 0.5, 0.5, 0.1, 0.7, 0.7]


def test_average_ranks_share_ties():
    assert average_ranks([10, 20, 20, 30]).tolist() == [1, 2.5, 2.5, 4]
    assert average_ranks([3, 1, 2]).tolist() == [3, 1, 2]
    assert average_ranks([5, 5, 5]).tolist() == [2, 2, 2]
    assert average_ranks([]).tolist() == []


def test_roc_auc_with_ties_by_hand():
    # positives 0.9, 0.5, 0.7 against negatives 0.5, 0.1, 0.7 (a tie counts half):
    # 0.9 beats all three (3); 0.5 ties 0.5, beats 0.1, loses to 0.7 (1.5); 0.7 beats 0.5 and 0.1, ties 0.7 (2.5)
    assert roc_auc(Y, S) == pytest.approx(7 / 9)
    # the rank formula: positive ranks 6 + 2.5 + 4.5 = 13; (13 - 3*4/2) / (3*3)
    assert roc_auc([1, 0], [0.2, 0.8]) == 0.0
    assert roc_auc([1, 0], [0.5, 0.5]) == 0.5


def test_balanced_accuracy_by_hand():
    # >= 0.6: rows 0, 4, 5 predicted good -> TPR 2/3 (rows 0, 4), TNR 2/3 (rows 2, 3)
    assert balanced_accuracy(Y, S, 0.6) == pytest.approx(2 / 3)
    # >= 0.5 (a score equal to the threshold is predicted good, as the gate passes a mean equal to it): TPR 1, TNR 1/3
    assert balanced_accuracy(Y, S, 0.5) == pytest.approx(2 / 3)
    assert balanced_accuracy([1, 1, 0, 0], [0.9, 0.8, 0.1, 0.85], 0.82) == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert balanced_accuracy([1, 1], [0.9, 0.1], 0.5) is None  # one class: undefined


def test_youden_threshold_lowest_of_equals():
    # candidates 0.1: J 0; 0.5: 1 - 2/3; 0.7: 2/3 - 1/3; 0.9: 1/3 - 0 -> the lowest of the three maxima
    t, j = best_threshold(Y, S)
    assert (t, j) == (0.5, pytest.approx(1 / 3))
    assert best_balanced_accuracy(Y, S) == pytest.approx(2 / 3)
    # a clean split: negatives 0.1 0.3 0.35, positives 0.4 0.8 0.9 -> 0.4, J 1
    assert best_threshold([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.4, 0.35, 0.8, 0.9]) == (0.4, 1.0)
    assert best_threshold([1, 1], [0.2, 0.3]) is None


def test_spearman_against_a_hand_ranking():
    labels, scores = [0.1, 0.4, 0.4, 0.9], [0.2, 0.1, 0.5, 0.8]
    # label ranks 1, 2.5, 2.5, 4 ; score ranks 2, 1, 3, 4 ; centred: (-1.5, 0, 0, 1.5) and (-0.5, -1.5, 0.5, 1.5)
    # r = 3 / sqrt(4.5 * 5)
    assert spearman(labels, scores) == pytest.approx(3 / math.sqrt(22.5))
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert spearman([0.1, 0.5], [0.3, 0.3]) is None  # all scores equal
    assert spearman([0.5], [0.3]) is None


def test_pair_outcomes_ties_count_half_and_unscored_is_wrong():
    assert pair_outcomes([0.9, 0.5, 0.2, None, 0.7], [0.1, 0.5, 0.6, 0.3, None]).tolist() == [1, 0.5, 0, 0, 0]


def test_pairwise_agreement_scored_and_counted_wrong():
    a = pairwise_agreement([0.9, 0.5, 0.2, None], [0.1, 0.5, 0.6, 0.3])
    assert (a.kind, a.rows, a.scored, a.unscored) == ("pairwise", 4, 3, 1)
    assert a.measures["pairwise_agreement"].value == 0.5  # (1 + 0.5 + 0) / 3
    assert a.measures["pairwise_agreement"].n == 3
    assert a.counted_wrong["pairwise_agreement"].value == 0.375  # (1 + 0.5 + 0 + 0) / 4
    assert a.counted_wrong["pairwise_agreement"].n == 4


def test_binary_agreement_unscored_counted_wrong():
    a = binary_agreement([1, 1, 0, 0], [0.9, None, 0.2, None], threshold=0.5)
    assert (a.rows, a.scored, a.unscored, a.classes) == (4, 2, 2, {"good": 2, "bad": 2})
    m, w = a.measures, a.counted_wrong
    assert m["roc_auc"].value == 1.0 and m["roc_auc"].n == 2
    assert m["balanced_accuracy_at_gate"].value == 1.0
    # the good unscored row ranks below everything, the bad one above: only (0.9, 0.2) of 4 pairs is ordered right
    assert w["roc_auc"].value == 0.25 and w["roc_auc"].n == 4
    assert w["balanced_accuracy_at_gate"].value == 0.5  # TPR 1/2, TNR 1/2
    assert w["balanced_accuracy_at_best"].value == 0.5
    assert a.suggested_threshold == 0.9 and a.youden_j == 1.0  # from the scored rows; lowest of 0.9 (J 1), 0.2 (J 0)


def test_binary_agreement_nothing_scored():
    a = binary_agreement([1, 0, 1], [None, None, None], threshold=0.8)
    assert all(e.value is None and e.note == "no scored rows" for e in a.measures.values())
    assert a.suggested_threshold is None and a.suggested_note == "no scored rows"
    assert {k: e.value for k, e in a.counted_wrong.items()} == {
        "roc_auc": 0.0, "balanced_accuracy_at_gate": 0.0, "balanced_accuracy_at_best": 0.0}


def test_binary_single_class_is_undefined_with_a_reason():
    a = binary_agreement([1, 1, 1], [0.2, 0.9, 0.5], threshold=0.8)
    for e in a.measures.values():
        assert e.value is None
        assert e.note == "only one class among the rows (3 good, 0 bad): undefined"
    assert a.suggested_threshold is None and "one class" in a.suggested_note


def test_binary_all_scores_equal():
    a = binary_agreement([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5], threshold=0.8)
    assert a.measures["roc_auc"].value == 0.5
    assert a.measures["balanced_accuracy_at_gate"].value == 0.5  # everything predicted bad
    assert a.measures["balanced_accuracy_at_best"].value == 0.5
    assert a.suggested_threshold == 0.5 and a.youden_j == 0.0
    assert "do not separate" in a.suggested_note


def test_binary_fewer_than_two_rows():
    a = binary_agreement([1], [0.7], threshold=0.5)
    assert a.measures["roc_auc"].value is None and "one class" in a.measures["roc_auc"].note
    with pytest.raises(ValueError, match="0 or 1"):
        binary_agreement([1, 0.5], [0.1, 0.2], threshold=0.5)


def test_graded_agreement_scored_and_counted_wrong():
    a = graded_agreement([0.1, 0.4, 0.9], [0.2, None, 0.8])
    assert (a.rows, a.scored, a.unscored) == (3, 2, 1)
    assert a.measures["mae"].value == pytest.approx(0.1)
    assert a.measures["spearman"].value == 1.0
    assert a.counted_wrong["mae"].value == pytest.approx((0.1 + 1 + 0.1) / 3)  # error 1 for the unscored row
    # the unscored row's label (0.4) has rank 2, in the upper half of 1..3, so it goes to the bottom:
    # label ranks 1, 2, 3 against score ranks 2, 1, 3 -> 1 / 2
    assert a.counted_wrong["spearman"].value == pytest.approx(0.5)


def test_graded_edge_cases():
    assert graded_agreement([0.2, 0.8], [0.5, 0.5]).measures["spearman"].note == "all scores are equal: no ranking"
    assert graded_agreement([0.5, 0.5], [0.1, 0.9]).measures["spearman"].note == "all labels are equal: no ranking"
    one = graded_agreement([0.3], [0.5])
    assert one.measures["spearman"].value is None and one.measures["mae"].value == pytest.approx(0.2)
    assert one.measures["mae"].ci_low is None and "fewer than 2" in one.measures["mae"].note
    none = graded_agreement([0.3, 0.6], [None, None])
    assert none.measures["mae"].note == "no scored rows" and none.counted_wrong["mae"].value == 1.0


# --- intervals --------------------------------------------------------------------------------------------------------

def _fixture(n: int = 60, seed: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(y * 0.3 + rng.random(n) * 0.7, 0, 1).round(2)
    return y.tolist(), s.tolist()


def test_intervals_are_seeded_and_bracket_the_value():
    y, s = _fixture()
    a, b = binary_agreement(y, s, 0.5), binary_agreement(y, s, 0.5)
    assert a == b  # same input, same intervals
    for name, e in a.measures.items():
        assert e.ci_low is not None and e.ci_low <= e.value <= e.ci_high, name
        assert e.ci_high - e.ci_low > 0
    other = binary_agreement(y, s, 0.5, seed=1)
    assert other.measures["roc_auc"].value == a.measures["roc_auc"].value
    assert other.measures["roc_auc"].ci_low != a.measures["roc_auc"].ci_low
    g = graded_agreement([v / 2 + 0.1 * (i % 3) for i, v in enumerate(s)], s)
    for e in (*g.measures.values(), *g.counted_wrong.values()):
        assert e.ci_low <= e.value <= e.ci_high
    p = pairwise_agreement(s[:30], s[30:])
    e = p.measures["pairwise_agreement"]
    assert e.ci_low <= e.value <= e.ci_high


def test_bootstrap_of_the_mean_matches_stats():
    """Same seed and draws as localragas.run.stats: the interval of a mean is the one reports show."""
    x = np.array(_fixture()[1])
    ci, note = bootstrap_statistic(lambda v: float(v.mean()), [x])
    assert ci == bootstrap_ci(x) and note is None


def test_resamples_where_a_figure_is_undefined_are_left_out():
    y, s = [1, 0, 0, 0, 0, 0, 0, 0], [0.9, 0.1, 0.2, 0.3, 0.2, 0.4, 0.1, 0.3]
    e = binary_agreement(y, s, 0.5).measures["roc_auc"]
    assert e.value == 1.0
    # a resample misses the single good row with probability (7/8)^8 ~ 0.34: left out, and said so
    assert e.ci_low is not None and "resamples left out" in e.note
    # undefined in about 3 of 4 resamples (those holding a 1): no interval
    ci, note = bootstrap_statistic(lambda v: None if v.max() > 0 else 0.0, [np.array([0.0, 1.0])])
    assert ci is None and note.startswith("undefined in ") and note.endswith("of 2000 resamples: no interval")
    assert bootstrap_statistic(lambda v: 0.5, [np.array([0.3])]) == (None, "fewer than 2 rows: no interval")


def test_figure_gain_is_new_minus_base_and_none_where_either_is_undefined():
    gain = figure_gain(roc_auc)
    y = np.array([1, 0, 1, 0])
    assert gain(y, np.array([.2, .8, .6, .4]), np.array([.9, .1, .8, .2])) == pytest.approx(1.0 - 0.25)
    assert gain(np.array([1, 1]), np.array([.2, .8]), np.array([.9, .1])) is None  # one label: no ROC AUC
    ci, note = bootstrap_statistic(gain, [np.array([1, 0, 1]), np.array([.2, .8, .6]), np.array([.9, .1, .8])])
    assert ci is not None and "left out" in note  # resamples with one label are dropped, not raised on


def test_the_formulas_agree_with_scipy_and_sklearn():
    """quality/agreement.py computes ranks, ROC AUC and Spearman itself (vectorised, for 2,000 resamples a figure); scipy's
    rankdata / spearmanr and sklearn's roc_auc_score give the same, ties and the counted-wrong rows' infinities
    included, and are undefined (one class, a constant side) where localragas says None."""
    scipy_stats = pytest.importorskip("scipy.stats")
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 60))
        y, g = rng.integers(0, 2, n), rng.integers(0, int(rng.integers(1, 5)), n) / 3
        s = rng.integers(0, int(rng.integers(1, 7)), n) / 5
        if rng.random() < 0.3:  # unscored rows counted wrong: a good row below every score, a bad row above
            s = np.where(rng.random(n) < 0.2, np.where(y == 1, -np.inf, np.inf), s)
        assert average_ranks(s).tolist() == scipy_stats.rankdata(s).tolist()
        if 0 < y.sum() < n:  # roc_auc_score refuses infinite scores: the same ranks, as finite numbers
            assert roc_auc(y, s) == pytest.approx(sk.roc_auc_score(y, scipy_stats.rankdata(s)), abs=1e-12)
            u = scipy_stats.mannwhitneyu(s[y == 1], s[y == 0]).statistic
            assert roc_auc(y, s) == pytest.approx(u / (y.sum() * (n - y.sum())), abs=1e-12)
        else:
            assert roc_auc(y, s) is None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns on a constant side, and gives NaN
            expected = scipy_stats.spearmanr(g, s).statistic
        got = spearman(g, s)
        assert (got is None and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    y, s = _fixture(80, 11)
    assert roc_auc(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-12)
    assert balanced_accuracy(y, s, 0.5) == pytest.approx(sk.balanced_accuracy_score(y, np.array(s) >= 0.5))
