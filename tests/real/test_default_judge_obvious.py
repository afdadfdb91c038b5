"""The default Qwen2.5-1.5B judge on hand-written cases where the right verdict is obvious, in both verdict modes: the
RAGAS-style JSON verdicts (verdicts=json) and the default graded verdicts (P(yes) from the next-token probabilities)."""
from __future__ import annotations

import pytest

from localragas import Sample, evaluate
from localragas.judge_calls import check_items, support_probabilities
from localragas.judge_calls.verdicts import VERDICTS
from localragas.judge_calls.sample_context import Scoring

from real_helpers import CLAIMS, CONTEXT, FAITHFUL

WRONG = Sample(id="bad", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
               answer="The Eiffel Tower was completed in 1925 in Berlin.")
# an unrelated chunk ranked first, the Eiffel Tower one second
CHUNKS = Sample(id="cp", question="How tall is the Eiffel Tower?",
                contexts=["Bananas are rich in potassium and grow in tropical climates.", *CONTEXT],
                answer="It is 330 metres tall.", reference="The Eiffel Tower is 330 metres tall.")


def verdicts(mode: str, *metrics: str) -> dict:
    """metric_options giving these metrics the `mode` verdicts ("json" or "probability")."""
    return {m: {"verdicts": mode} for m in metrics}


@pytest.mark.parametrize("mode", VERDICTS)
def test_stated_claims_supported_contradicted_ones_not(qwen_judge, mode):
    """json: the yes/no flags; probability: P(yes) over one half for the stated claims only."""
    ask = {"json": check_items, "probability": support_probabilities}[mode]
    values = ask(Scoring(FAITHFUL, qwen_judge), CLAIMS, CONTEXT)
    assert [v > 0.5 for v in values] == [True, False, True, False], values


@pytest.mark.parametrize("mode", VERDICTS)
def test_faithful_answer_above_hallucinated(qwen_judge, tmp_path, mode):
    kw = dict(metrics=["faithfulness"], judge=qwen_judge, metric_options=verdicts(mode, "faithfulness"),
              cache_dir=tmp_path, gate=False)
    report = evaluate([FAITHFUL, WRONG], **kw)
    ok, bad = (s.metrics["faithfulness"] for s in report.samples)
    assert ok.value > 0.5 > bad.value, (ok.evidence, bad.evidence)
    assert ok.evidence["verdicts"] == mode
    if mode == "json":
        assert ok.value == 1.0, ok.evidence
        assert report.meta["judge_stats"]["parse_failures"] == 0
        return
    assert all("p_supported" in c for c in ok.evidence["claims"])
    again = evaluate([FAITHFUL, WRONG], **kw)  # every reply, graded verdicts included, from the cache
    assert sum(s.judge["calls"] for s in again.samples) == 0  # meta's judge_stats count the shared judge's life
    assert [s.metrics["faithfulness"].value for s in again.samples] == [ok.value, bad.value]


@pytest.mark.parametrize("mode", VERDICTS)
def test_relevant_chunk_ranks_above_the_unrelated_one(qwen_judge, mode):
    # the judge check and its canaries are asked (and must pass) in test_faithful_answer_above_hallucinated's runs of
    # the same judge in both modes; here the two metrics alone
    report = evaluate([CHUNKS], metrics=["context_precision", "context_recall"], judge=qwen_judge, judge_check=False,
                      metric_options=verdicts(mode, "context_precision", "context_recall"), gate=False)
    cp = report.samples[0].metrics["context_precision"]
    recall = report.samples[0].metrics["context_recall"].value
    assert not cp.evidence["chunks"][0]["relevant"] and recall > 0.5, cp.evidence
    if mode == "json":
        assert [c["relevant"] for c in cp.evidence["chunks"]] == [False, True]
        assert cp.value == 0.5 and recall == 1.0
        return
    banana, eiffel = (c["p_relevant"] for c in cp.evidence["chunks"])
    # the ranking, not the scale: this judge's P(yes) runs low (0.43 for the Eiffel chunk on 2026-11-30)
    assert eiffel > banana + 0.2 and banana < 0.5, cp.evidence
