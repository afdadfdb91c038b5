"""The default Qwen2.5-1.5B judge on hand-written cases where the right verdict is obvious."""
from __future__ import annotations

from localragas import Sample, evaluate
from localragas.metrics.base import supported

CONTEXT = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889 "
    "and is 330 metres tall. It was designed by the company of engineer Gustave Eiffel."
]


def test_stated_claim_supported_contradicted_claim_not(qwen_judge):
    flags = supported(
        qwen_judge,
        [
            "The Eiffel Tower is in Paris.",                 # stated
            "The Eiffel Tower was completed in 1925.",       # contradicted (1889)
            "The Eiffel Tower is 330 metres tall.",          # stated
            "The Eiffel Tower is made of concrete.",         # contradicted (wrought iron)
        ],
        CONTEXT,
    )
    assert flags == [True, False, True, False]


def test_faithful_and_hallucinated_answers(qwen_judge):
    faithful = Sample(id="ok", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
                      answer="The Eiffel Tower was completed in 1889.")
    wrong = Sample(id="bad", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
                   answer="The Eiffel Tower was completed in 1925 in Berlin.")
    report = evaluate([faithful, wrong], metrics=["faithfulness"], judge=qwen_judge)
    ok, bad = (s.metrics["faithfulness"] for s in report.samples)
    assert ok.value == 1.0, ok.evidence
    assert bad.value is not None and bad.value < 0.5, bad.evidence
    assert report.meta["judge_stats"]["parse_failures"] == 0


def test_relevant_chunk_recognised(qwen_judge):
    sample = Sample(
        id="cp", question="How tall is the Eiffel Tower?",
        contexts=["Bananas are rich in potassium and grow in tropical climates.", *CONTEXT],
        answer="It is 330 metres tall.", reference="The Eiffel Tower is 330 metres tall.",
    )
    report = evaluate([sample], metrics=["context_precision", "context_recall"], judge=qwen_judge)
    cp = report.samples[0].metrics["context_precision"]
    assert [c["relevant"] for c in cp.evidence["chunks"]] == [False, True]
    assert cp.value == 0.5
    assert report.samples[0].metrics["context_recall"].value == 1.0
