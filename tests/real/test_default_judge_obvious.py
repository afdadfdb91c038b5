"""The default Qwen2.5-1.5B judge on hand-written cases where the right verdict is obvious: the RAGAS-style JSON
verdicts (verdicts=json) first, then the default graded verdicts (P(yes) from the next-token probabilities)."""
from __future__ import annotations

from localragas import Sample, evaluate
from localragas.asking import check_items, support_probabilities
from localragas.scoring import Scoring

CONTEXT = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889 "
    "and is 330 metres tall. It was designed by the company of engineer Gustave Eiffel."
]
CLAIMS = [
    "The Eiffel Tower is in Paris.",                 # stated
    "The Eiffel Tower was completed in 1925.",       # contradicted (1889)
    "The Eiffel Tower is 330 metres tall.",          # stated
    "The Eiffel Tower is made of concrete.",         # contradicted (wrought iron)
]
FAITHFUL = Sample(id="ok", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
                  answer="The Eiffel Tower was completed in 1889.")
WRONG = Sample(id="bad", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
               answer="The Eiffel Tower was completed in 1925 in Berlin.")
# an unrelated chunk ranked first, the Eiffel Tower one second
CHUNKS = Sample(id="cp", question="How tall is the Eiffel Tower?",
                contexts=["Bananas are rich in potassium and grow in tropical climates.", *CONTEXT],
                answer="It is 330 metres tall.", reference="The Eiffel Tower is 330 metres tall.")


def verdicts(mode: str, *metrics: str) -> dict:
    """metric_options giving these metrics the `mode` verdicts ("json" or "probability")."""
    return {m: {"verdicts": mode} for m in metrics}


def test_stated_claim_supported_contradicted_claim_not(qwen_judge):
    flags = check_items(Scoring(FAITHFUL, qwen_judge), CLAIMS, CONTEXT)
    assert flags == [True, False, True, False]


def test_faithful_and_hallucinated_answers(qwen_judge):
    report = evaluate([FAITHFUL, WRONG], metrics=["faithfulness"], judge=qwen_judge,
                      metric_options=verdicts("json", "faithfulness"))
    ok, bad = (s.metrics["faithfulness"] for s in report.samples)
    assert ok.value == 1.0, ok.evidence
    assert bad.value is not None and bad.value < 0.5, bad.evidence
    assert report.meta["judge_stats"]["parse_failures"] == 0


def test_relevant_chunk_recognised(qwen_judge):
    report = evaluate([CHUNKS], metrics=["context_precision", "context_recall"], judge=qwen_judge,
                      metric_options=verdicts("json", "context_precision", "context_recall"))
    cp = report.samples[0].metrics["context_precision"]
    assert [c["relevant"] for c in cp.evidence["chunks"]] == [False, True]
    assert cp.value == 0.5
    assert report.samples[0].metrics["context_recall"].value == 1.0


# --- graded verdicts (verdicts=probability): P(yes) from the judge's next-token probabilities ---------------------

def test_graded_stated_claims_score_above_contradicted_ones(qwen_judge):
    probs = support_probabilities(Scoring(FAITHFUL, qwen_judge), CLAIMS, CONTEXT)
    assert min(probs[0], probs[2]) > 0.5 > max(probs[1], probs[3]), probs


def test_graded_faithful_answer_above_hallucinated_and_cached(qwen_judge, tmp_path):
    kw = dict(metrics=["faithfulness"], judge=qwen_judge, metric_options=verdicts("probability", "faithfulness"),
              cache_dir=tmp_path, gate=False)
    report = evaluate([FAITHFUL, WRONG], **kw)
    ok, bad = (s.metrics["faithfulness"] for s in report.samples)
    assert ok.value > 0.5 > bad.value, (ok.evidence, bad.evidence)
    assert ok.evidence["verdicts"] == "probability" and all("p_supported" in c for c in ok.evidence["claims"])
    again = evaluate([FAITHFUL, WRONG], **kw)  # every reply, graded verdicts included, from the cache
    assert sum(s.judge["calls"] for s in again.samples) == 0  # meta's judge_stats count the shared judge's life
    assert [s.metrics["faithfulness"].value for s in again.samples] == [ok.value, bad.value]


def test_graded_relevant_chunk_ranks_above_the_unrelated_one(qwen_judge):
    report = evaluate([CHUNKS], metrics=["context_precision", "context_recall"], judge=qwen_judge,
                      metric_options=verdicts("probability", "context_precision", "context_recall"), gate=False)
    cp = report.samples[0].metrics["context_precision"]
    banana, eiffel = (c["p_relevant"] for c in cp.evidence["chunks"])
    # the ranking, not the scale: this judge's P(yes) runs low (0.43 for the Eiffel chunk on 2026-11-30)
    assert eiffel > banana + 0.2 and banana < 0.5, cp.evidence
    assert report.samples[0].metrics["context_recall"].value > 0.5
