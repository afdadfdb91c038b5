"""Bootstrap confidence intervals on every aggregate, and the gate on the interval's lower bound."""
from __future__ import annotations

import numpy as np
import pytest

from localragas.core.errors import ConfigError
from localragas.run.gate import run_gate
from localragas.data.schema import MetricSummary
from localragas.run.results import columns_of
from localragas.run.stats import bootstrap_ci, paired_difference, summarise_columns

from reports_helpers import make_report


def test_bootstrap_ci_is_seeded_and_reproducible():
    values = [0.1, 0.9, 0.5, 0.7, 0.3, 1.0, 0.0, 0.6]
    assert bootstrap_ci(values) == bootstrap_ci(values)
    assert bootstrap_ci(values, seed=1) != bootstrap_ci(values, seed=2)


def test_bootstrap_ci_brackets_the_mean_and_narrows_with_more_samples():
    rng = np.random.default_rng(7)
    small = rng.uniform(size=10).tolist()
    big = rng.uniform(size=1000).tolist()
    lo, hi = bootstrap_ci(small)
    assert lo <= np.mean(small) <= hi
    blo, bhi = bootstrap_ci(big)
    assert (bhi - blo) < (hi - lo) / 3


def test_bootstrap_ci_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    hits = 0
    for i in range(200):
        x = rng.binomial(1, 0.7, size=60).astype(float)
        lo, hi = bootstrap_ci(x, resamples=500, seed=i)
        hits += lo <= 0.7 <= hi
    assert 0.88 <= hits / 200 <= 0.99


def test_bootstrap_ci_degenerate_inputs():
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([0.4]) is None
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)


def test_summaries_carry_intervals_overall_and_by_category():
    r = make_report({"a": {"faithfulness": 1.0}, "b": {"faithfulness": 0.0}, "c": {"faithfulness": 0.5},
                     "d": {"faithfulness": None}}, category={"a": "x", "b": "x", "c": "y", "d": "y"})
    s = r.summary_for("faithfulness")
    assert s.scored == 3 and s.unscored == 1 and s.ci_low is not None
    assert s.ci_low <= s.mean <= s.ci_high
    assert r.by_category["x"][0].ci_low == 0.0 and r.by_category["x"][0].ci_high == 1.0
    assert r.by_category["y"][0].ci_low is None  # one scored sample: no interval
    assert r.meta["ci"]["level"] == 0.95 and r.meta["ci"]["seed"] == 0


def summ(mean, lo, hi, scored=10):
    return MetricSummary(metric="faithfulness", mean=mean, scored=scored, unscored=0, ci_low=lo, ci_high=hi)


def test_gate_on_lower_bound_fails_where_the_mean_passes():
    s = [summ(0.84, 0.76, 0.91)]
    assert run_gate(s, {"faithfulness": 0.8}, {}).passed
    g = run_gate(s, {"faithfulness": 0.8}, {}, on="lower-bound")
    assert not g.passed and g.on == "lower-bound"
    r = g.results[0]
    assert r.compared == 0.76 and r.mean == 0.84 and r.ci_low == 0.76
    assert "CI lower bound 0.760 (mean 0.840) < 0.80" in r.message


def test_gate_on_lower_bound_with_one_sample_uses_the_mean_and_says_so():
    g = run_gate([summ(0.9, None, None, scored=1)], {"faithfulness": 0.8}, {}, on="lower-bound")
    assert g.passed and "no interval, mean used" in g.results[0].message


def test_gate_on_rejects_unknown_mode():
    with pytest.raises(ConfigError, match="gate-on"):
        run_gate([summ(0.9, 0.8, 1.0)], {}, {}, on="median")


def test_paired_difference_removes_between_sample_spread():
    base = [0.1, 0.9, 0.3, 0.7, 0.5, 0.2, 0.8, 0.4]
    new = [b + 0.05 for b in base]
    d = paired_difference(base, new)
    assert d["pairs"] == 8 and d["diff"] == pytest.approx(0.05)
    assert d["ci_low"] == pytest.approx(0.05) and d["ci_high"] == pytest.approx(0.05)
    assert paired_difference([], [])["diff"] is None
    with pytest.raises(ValueError):
        paired_difference([0.1], [0.1, 0.2])


def test_summarise_is_unchanged_for_means():
    r = make_report({"a": {"context_recall": 0.25}, "b": {"context_recall": 0.75}})
    assert summarise_columns(columns_of(r.samples, ["context_recall"]), ["context_recall"])[0].mean == 0.5
