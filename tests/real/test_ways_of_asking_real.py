"""The default Qwen2.5-1.5B judge asked each way faithfulness offers (docs/metrics.md#metric-options): every way keeps
the stated claims of an obvious case above the contradicted ones; with question=both, the evidence keeps both
probabilities and the score combines them as documented."""
from __future__ import annotations

import pytest

from localragas.metrics import all_metrics
from localragas.run.judging_context import run_judging
from localragas.judge_calls.sample_context import Scoring

from real_helpers import CLAIMS, FAITHFUL

WAYS = [{"question": "both"}]  # the default (the support question alone) is the real tier's every faithfulness run
ANSWER = " ".join(CLAIMS)  # stated, contradicted, stated, contradicted


@pytest.mark.parametrize("way", WAYS, ids=lambda w: ",".join(f"{k}={v}" for k, v in w.items()))
def test_each_way_ranks_stated_claims_above_contradicted_ones(qwen_judge, way):
    metric = all_metrics()["faithfulness"].with_options(statements="sentences", **way)
    judging = run_judging(qwen_judge)  # with the catalogue's calibration, as a run asks
    r = metric.score(Scoring(FAITHFUL.model_copy(update={"answer": ANSWER}), judging))
    p = [c["p_supported"] for c in r.evidence["claims"]]
    assert min(p[0], p[2]) > max(p[1], p[3]), r.evidence
    if way.get("question") == "both":
        # Both probabilities are kept in the evidence, and the combined score is the documented mean. (Whether this
        # judge says "yes, contradicted" more to the contradicted claims is not asserted: on 2026-12-02 it gave
        # 0.49 / 0.49 to the stated ones and 0.17 / 0.07 to the contradicted ones, reading the question as the
        # support question; docs/accuracy.md.)
        for c in r.evidence["claims"]:
            assert 0.0 <= c["p_contradicted"] <= 1.0, c
            assert c["p_supported"] == pytest.approx((c["p_supported_only"] + 1 - c["p_contradicted"]) / 2, abs=1e-3)
