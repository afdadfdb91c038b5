"""The metrics beyond the core four, and the Chinese prompts, with real models.

SmolLM2-135M (weak judgement, real grammar-constrained decoding): one `localragas eval` of every new metric on an
English sample and two of the Chinese examples (a Chinese one and one with an English answer), shared by the tests
below: every reply parses, and every result is a score in [0, 1] with its evidence and the answer's language, or
unscored with a reason. Qwen2.5-1.5B (the default judge): the reference article's Chinese sentence is split into its
two claims, in Chinese.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localragas import Sample, evaluate
from localragas.data.language import detect
from localragas.judge_calls import claims_of
from localragas.judge_calls.sample_context import Scoring
from localragas.metrics import all_metrics
from localragas.metrics.registry import default_metric_names
from localragas.data.ragas_compat import from_ragas_names
from localragas.data.schema import Report

from cli_helpers import cli

DEFAULT = tuple(default_metric_names())  # the four RAGAS core metrics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# the conversation metrics score a conversation's turns: tests/real/test_conversations_real.py, with the default judge
NEW = [n for n, m in all_metrics().items() if n not in DEFAULT and "turn" not in m.needs]

# per metric: evidence keys a scored result has, and the unscored reasons a sample here may give
EVIDENCE = {
    "context_entity_recall": {"entities"},
    "noise_sensitivity_relevant": {"claims", "contexts", "direction"},
    "noise_sensitivity_irrelevant": {"claims", "contexts", "direction"},
    "factual_correctness": {"answer_claims", "reference_claims", "precision", "recall", "f_beta"},
    "factual_correctness_precision": {"answer_claims", "precision"},
    "factual_correctness_recall": {"answer_claims", "reference_claims", "recall"},
    "answer_correctness": {"factuality", "similarity", "answer_claims", "reference_claims"},
    "semantic_similarity": {"similarity"},
    "context_relevance": {"ratings"},
    "id_based_context_precision": {"retrieved"},
    "id_based_context_recall": {"reference"},
}
REASONS = {"no_claims", "no_reference_claims", "no_entities", "no_reference", "no_contexts"}

EN = Sample(
    id="en-eiffel",
    question="When was the Eiffel Tower completed and how tall is it?",
    contexts=["Bananas are rich in potassium and grow in tropical climates.",
              "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889 and is "
              "330 metres tall."],
    answer="The Eiffel Tower was completed in 1889. It is 330 metres tall and made of concrete.",
    reference="The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall.",
    retrieved_context_ids=["banana-1", "eiffel-1"],
    reference_context_ids=["eiffel-1"],
)


LANGUAGE = {"en-eiffel": "en", "zh-java-oop": "zh", "zh-mixed-language": "en"}  # zh-mixed: an English answer


@pytest.fixture(scope="module")
def new_metrics_run(tmp_path_factory) -> Report:
    """The report, as written (ragas names), of one CLI run of every new metric on EN and two Chinese examples (all 8
    x 11 metrics took over 10 minutes on 2 cores; one run of these three is shared by every test of it)."""
    rows = [line for line in (EXAMPLES / "rag_samples_zh.jsonl").read_text(encoding="utf-8").splitlines()
            if '"zh-java-oop"' in line or '"zh-mixed-language"' in line]
    folder = tmp_path_factory.mktemp("new-metrics")
    data, out = folder / "data.jsonl", folder / "report.json"
    data.write_text("\n".join([EN.model_dump_json(exclude_none=True), *rows]) + "\n", encoding="utf-8")
    result = cli(
        "eval", str(data), "--judge", "smollm2-135m", "--embedder", "minilm-l6",
        "--no-progress", "--no-cache", "--no-resume", "-m", ",".join(NEW), "--out", str(out), "--ragas-names")
    assert result.exit_code in (0, 1), result.output
    return Report.model_validate(json.loads(out.read_text()))


@pytest.mark.parametrize("metric", NEW)
def test_metric_with_test_judge_parses_and_records_evidence(metric, new_metrics_run):
    report = from_ragas_names(new_metrics_run)
    stats = report.meta["judge_stats"]
    assert stats["parse_failures"] == 0 and stats["failed_calls"] == 0, stats["errors"]
    assert {s.id for s in report.samples} == set(LANGUAGE)
    for s in report.samples:
        r = s.metrics[metric]
        if r.value is None:
            assert r.unscored in REASONS, (s.id, r.unscored)
            continue
        assert 0.0 <= r.value <= 1.0
        assert EVIDENCE[metric] <= set(r.evidence), (s.id, sorted(r.evidence))
        if all_metrics()[metric].uses_judge:
            assert r.evidence["language"] == LANGUAGE[s.id], (s.id, r.evidence["language"])


def test_id_based_and_semantic_similarity_values(minilm):
    report = evaluate([EN], metrics=["id_based_context_precision", "id_based_context_recall", "semantic_similarity"],
                      judge="fake", embedder=minilm)
    m = report.samples[0].metrics
    assert m["id_based_context_precision"].value == 0.5 and m["id_based_context_recall"].value == 1.0
    close = m["semantic_similarity"].value
    far = evaluate([EN.model_copy(update={"answer": "Bananas grow in tropical climates."})],
                   metrics=["semantic_similarity"], judge="fake", embedder=minilm).samples[0].metrics
    assert close > far["semantic_similarity"].value + 0.2


def test_chinese_examples_with_every_new_metric_through_the_cli(new_metrics_run):
    report = new_metrics_run
    assert report.meta["judge_stats"]["parse_failures"] == 0, report.meta["judge_stats"]["errors"]
    assert "noise_sensitivity(mode=relevant)" in report.metrics  # --ragas-names
    langs = {s.id: {r.evidence.get("language") for r in s.metrics.values() if r.scored} - {None}
             for s in report.samples}
    assert langs["zh-java-oop"] == {"zh"} and langs["zh-mixed-language"] == {"en"}  # an English answer


def test_default_judge_splits_the_articles_chinese_sentence_into_two_chinese_claims(qwen_judge):
    """The reference article's example: 'Java是面向对象的语言，由Sun公司开发' -> 'Java是面向对象的语言',
    'Java由Sun公司开发' (the prompt's own Chinese example is a different sentence)."""
    s = Sample(id="java", question="Java是什么样的语言？由谁开发？", contexts=[], answer="Java是面向对象的语言，由Sun公司开发")
    claims = claims_of(Scoring(s, qwen_judge), s.answer, s.question)
    assert len(claims) == 2, claims
    assert all(detect(c) == "zh" for c in claims), claims
    oop = [c for c in claims if "面向对象" in c]
    sun = [c for c in claims if "Sun" in c and "开发" in c]
    assert len(oop) == 1 and len(sun) == 1 and oop != sun, claims
    assert "Java" in sun[0], claims  # self-contained: the pronoun-less second half names Java
