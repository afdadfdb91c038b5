"""The prediction-powered mean (quality/ppi.py) against the method's authors' ppi_py on fixed arrays, its edge cases,
and its coverage on a biased judge (where the judge-only interval misses)."""
from __future__ import annotations

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from localragas.quality.ppi import MIN_LABELS, labels_only, ppi_mean
from localragas.run.stats import bootstrap_ci


def _arrays(seed: int = 3, n: int = 40, big_n: int = 400):
    rng = np.random.default_rng(seed)
    yhat_all = rng.uniform(0.2, 0.95, big_n)
    yhat = rng.uniform(0.2, 0.95, n)
    y = (rng.uniform(size=n) < yhat - 0.1).astype(float)
    return y, yhat, yhat_all, rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("lam", [None, 1.0, 0.3, 0.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_ppi_py(lam, weighted):
    y, yhat, yhat_all, w = _arrays()
    weights = w if weighted else None
    low, high = ppi_mean_ci(y, yhat, yhat_all, alpha=0.05, lam=lam, w=weights)
    got = ppi_mean(y, yhat, yhat_all, weights=weights, lam=lam)
    assert got.ci_low == pytest.approx(float(np.squeeze(low)), abs=1e-6)
    assert got.ci_high == pytest.approx(float(np.squeeze(high)), abs=1e-6)
    if lam is not None:  # ppi_py's point estimate tunes lam from another first estimate than its interval does
        point = ppi_mean_pointestimate(y, yhat, yhat_all, lam=lam, w=weights)
        assert got.mean == pytest.approx(float(np.squeeze(point)), abs=1e-6)
    else:
        assert got.mean == pytest.approx((low + high).item() / 2, abs=1e-6)
        assert 0.0 <= got.lam <= 1.0


def test_labels_only_is_lam_zero():
    y, yhat, yhat_all, _ = _arrays()
    low, high = ppi_mean_ci(y, yhat, yhat_all, alpha=0.05, lam=0.0)
    got = labels_only(y)
    assert (got.ci_low, got.ci_high) == (pytest.approx(low.item(), abs=1e-6), pytest.approx(high.item(), abs=1e-6))
    assert got.mean == pytest.approx(y.mean(), abs=1e-6) and got.lam == 0.0


def test_effective_labels_is_n_times_the_variance_ratio():
    y, yhat, yhat_all, _ = _arrays()
    got, alone = ppi_mean(y, yhat, yhat_all), labels_only(y)
    assert got.effective_labels == pytest.approx(y.size * (alone.se / got.se) ** 2, rel=1e-3)


def test_all_labels_identical_keep_a_width():
    y = np.ones(30)
    yhat = np.full(30, 0.7)
    got, alone = ppi_mean(y, yhat, np.full(200, 0.7)), labels_only(y)
    assert got.ci_high - got.ci_low > 0.05 and alone.ci_high - alone.ci_low > 0.05
    assert "same" in (got.note or "") and got.ci_high == 1.0


def test_below_the_minimum_is_not_trustworthy():
    y, yhat, yhat_all, _ = _arrays(n=MIN_LABELS - 1)
    got = ppi_mean(y, yhat, yhat_all)
    assert not got.trustworthy and f"minimum of {MIN_LABELS}" in got.note
    assert ppi_mean(*_arrays(n=MIN_LABELS)[:3]).trustworthy


def test_missing_judge_scores_are_left_out_and_said():
    y, yhat, yhat_all, _ = _arrays()
    yhat = yhat.copy()
    yhat[:3] = np.nan
    got = ppi_mean(y, yhat, yhat_all)
    assert got.n == y.size - 3 and "not in the population" in got.note
    assert got.mean == pytest.approx(ppi_mean(y[3:], yhat[3:], yhat_all).mean)


def test_no_label():
    assert ppi_mean([], [], [0.5]).mean is None and labels_only([]).mean is None


def test_coverage_on_a_biased_judge():
    """A judge 0.15 too optimistic: the judge-only interval never covers the people's share; PPI++ covers ~94%."""
    rng = np.random.default_rng(0)
    big_n, n, reps = 400, 50, 1000
    covered_ppi = covered_judge = 0
    for _ in range(reps):
        truth_p = rng.beta(2, 2, big_n)  # each unit's chance that a person says supported
        people = (rng.uniform(size=big_n) < truth_p).astype(float)
        judge = np.clip(truth_p + 0.15 + rng.normal(0, 0.1, big_n), 0, 1)
        share = people.mean()
        idx = rng.integers(0, big_n, n)  # random labels, with replacement
        got = ppi_mean(people[idx], judge[idx], judge)
        covered_ppi += got.ci_low <= share <= got.ci_high
        low, high = bootstrap_ci(judge, resamples=100)
        covered_judge += low <= share <= high
    assert covered_ppi / reps >= 0.92  # 0.929-0.941 over 2,000 repetitions (3 seeds): a normal interval at n = 50
    assert covered_judge / reps < 0.2
