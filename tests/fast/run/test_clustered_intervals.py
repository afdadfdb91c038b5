"""Intervals clustered by conversation: the bootstrap resamples whole conversations when results are turns (run/stats.py),
the mean staying the turn-level mean; the plain bootstrap, draw for draw, when every sample is its own cluster."""
from __future__ import annotations

import json

import numpy as np

from localragas.quality.compare import compare_reports
from localragas.run.stats import NO_CLUSTER, bootstrap_ci, cluster_codes, paired_difference

from cli_helpers import chat_run
from reports_helpers import make_report


def _correlated(conversations: int = 30, turns: int = 5, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Scores whose turns share their conversation's level (a good or a bad conversation), and their clusters."""
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.1, 0.9, size=conversations)
    values = np.clip(np.repeat(level, turns) + rng.normal(0, 0.05, size=conversations * turns), 0, 1)
    return values, np.repeat(np.arange(conversations), turns)


def test_the_clustered_interval_is_wider_on_correlated_turns_and_holds_the_turn_mean():
    values, clusters = _correlated()
    naive, clustered = bootstrap_ci(values), bootstrap_ci(values, clusters=clusters)
    assert naive is not None and clustered is not None
    assert clustered[1] - clustered[0] > 1.8 * (naive[1] - naive[0])  # ~ sqrt(5) wider: 5 turns, one level each
    assert clustered[0] < values.mean() < clustered[1]


def test_every_sample_its_own_cluster_gives_the_plain_interval_draw_for_draw():
    rng = np.random.default_rng(5)
    for n in (2, 7, 300):
        values = rng.uniform(size=n)
        assert bootstrap_ci(values, clusters=np.arange(n)) == bootstrap_ci(values)
        keys = rng.permutation(n) * 7919 + 13  # every sample in a conversation of its own: codes in order of appearance
        assert list(cluster_codes(keys)) == list(range(n))
        assert paired_difference(values[::-1], values, clusters=np.arange(n)) == paired_difference(values[::-1], values)


def test_cluster_codes_group_a_conversation_and_keep_single_samples_apart():
    keys = np.array([NO_CLUSTER, 77, 77, NO_CLUSTER, 12, 77])
    assert list(cluster_codes(keys)) == [0, 1, 1, 2, 3, 1]
    assert cluster_codes(np.array([NO_CLUSTER] * 3)) is None  # no conversation: the plain path
    assert bootstrap_ci([0.2, 0.4, 0.6], clusters=np.array([0, 0, 0])) is None  # one conversation: nothing to resample


def test_a_report_of_turns_resamples_conversations_and_says_so():
    rows = {}
    for c in range(12):
        level = 0.1 if c % 2 else 0.9
        for t in range(1, 5):
            rows[f"c{c}#{t}"] = {"faithfulness": level + 0.01 * t}
    turns = make_report(rows, turns=True)
    flat = make_report(rows)
    s, f = turns.summary_for("faithfulness"), flat.summary_for("faithfulness")
    assert s.mean == f.mean  # the gate's mean: the turn-level one either way
    assert s.ci_high - s.ci_low > 1.5 * (f.ci_high - f.ci_low)
    assert turns.meta["ci"]["resampled"] == "conversations" and flat.meta["ci"]["resampled"] == "samples"
    assert turns.meta["conversations"] == {"conversations": 12, "turns": 48}
    assert "conversations" not in flat.meta


def test_compare_bootstraps_conversations_and_pairs_turns():
    base, new = {}, {}
    for c in range(12):
        shift = 0.25 if c % 3 else -0.3  # a conversation's turns all move together
        for t in range(1, 5):
            base[f"c{c}#{t}"] = {"faithfulness": 0.5}
            new[f"c{c}#{t}"] = {"faithfulness": 0.5 + shift + 0.01 * t}
    clustered = compare_reports(make_report(base, turns=True), make_report(new, turns=True))
    plain = compare_reports(make_report(base), make_report(new))
    a, b = clustered.metrics[0], plain.metrics[0]
    assert a.pairs == b.pairs == 48 and a.diff == b.diff
    assert a.ci_high - a.ci_low > 1.5 * (b.ci_high - b.ci_low)
    assert b.verdict == "improved" and a.verdict == "within_noise"  # 48 turns seemed decisive; 12 conversations are not


def test_eval_of_conversations_reports_conversation_clustered_intervals(tmp_path):
    report = json.loads(chat_run(tmp_path).read_text())
    assert report["meta"]["ci"]["resampled"] == "conversations"
    assert report["meta"]["conversations"] == {"conversations": 2, "turns": 3}
    precision = next(s for s in report["summary"] if s["metric"] == "context_precision")
    values = [s["metrics"]["context_precision"]["value"] for s in report["samples"]]
    # plans#1 and plans#2 drawn together: the lowest resample is the plans conversation twice, not plans#2 thrice
    assert precision["ci_low"] == round((values[0] + values[1]) / 2, 6) > min(values)


def test_a_spot_checks_judge_only_interval_is_the_reports_clustered_one():
    from localragas.quality.spot_checks import metric_spot_check

    rows = {f"c{c}#{t}": {"faithfulness": (0.1 if c % 2 else 0.9) + 0.01 * t} for c in range(8) for t in range(1, 4)}
    report = make_report(rows, turns=True)
    judge = metric_spot_check(report, "faithfulness", [], []).judge_mean
    s = report.summary_for("faithfulness")
    assert (judge.ci_low, judge.ci_high) == (s.ci_low, s.ci_high)
    plain = make_report(rows).summary_for("faithfulness")
    assert s.ci_high - s.ci_low > plain.ci_high - plain.ci_low  # clustered, not plain
