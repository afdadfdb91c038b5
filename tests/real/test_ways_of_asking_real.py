"""The default Qwen2.5-1.5B judge asked each way faithfulness offers (docs/metrics.md#metric-options): every way keeps
the stated claims of an obvious case above the contradicted ones, and the contradiction question says "yes" more to the
contradicted claims than to the stated ones, on average."""
from __future__ import annotations

import pytest

from localragas.metrics import all_metrics
from localragas.scoring import Scoring

from test_default_judge_obvious import CLAIMS, CONTEXT, FAITHFUL

WAYS = [{"evidence": "focused"}, {"question": "both"}, {"shots": 3}, {"phrasings": 2},
        {"question": "both", "shots": 3, "phrasings": 2, "evidence": "focused"}]
ANSWER = " ".join(CLAIMS)  # stated, contradicted, stated, contradicted


@pytest.mark.parametrize("way", WAYS, ids=lambda w: ",".join(f"{k}={v}" for k, v in w.items()))
def test_each_way_ranks_stated_claims_above_contradicted_ones(qwen_judge, minilm, way):
    metric = all_metrics()["faithfulness"].with_options(statements="sentences", **way)
    r = metric.score(Scoring(FAITHFUL.model_copy(update={"answer": ANSWER}), qwen_judge, minilm))
    p = [c["p_supported"] for c in r.evidence["claims"]]
    assert min(p[0], p[2]) > max(p[1], p[3]), r.evidence
    if way.get("question") == "both":
        contradicted = [c["p_contradicted"] for c in r.evidence["claims"]]
        assert contradicted[1] + contradicted[3] > contradicted[0] + contradicted[2], r.evidence
