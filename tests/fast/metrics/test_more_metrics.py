"""The metrics beyond the RAGAS core four, against a scripted FakeJudge: what the judge is asked, the score, the
evidence and the unscored reasons."""
from __future__ import annotations

import math

import pytest

from localragas.core.errors import ConfigError
from localragas.data.conversations import conversation_samples
from localragas.judges import FakeJudge, Judging
from localragas.metrics import all_metrics, get_metrics
from localragas.metrics.registry import default_metric_names
from localragas.metrics.correctness import f_beta
from localragas.core.reply_schemas import Claims, Entities, Rating, Verdicts
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import StubEmbedder, Texts, verdict_count, verdicts

DEFAULT = tuple(default_metric_names())  # the four RAGAS core metrics

M = all_metrics()

sample = Texts("Who developed Java and when was it released?",
               ["Java is an object-oriented language developed by Sun Microsystems.",
                "Python was created by Guido van Rossum and released in 1991."],
               "Java was developed by Sun Microsystems. Java was released in 1991. Java is owned by Google.",
               "Sun Microsystems developed Java. Java was released in 1995.")


def contexts_of(prompt) -> list[str]:
    """The texts written as <context> items into a prompt."""
    import re

    return [m.strip() for m in re.findall(r"<context[^>]*>\n(.*?)\n</context>", prompt.user, flags=re.S)]


# --- registry and options --------------------------------------------------------------------------------------


def test_new_metrics_are_registered_after_the_core_four_and_not_in_the_default_set():
    names = list(M)
    assert names[:4] == list(DEFAULT) == ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
    assert set(names[4:]) == {
        "context_entity_recall", "noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "factual_correctness",
        "factual_correctness_precision", "factual_correctness_recall", "answer_correctness", "semantic_similarity",
        "context_relevance", "id_based_context_precision", "id_based_context_recall", "knowledge_retention",
        "conversation_completeness"}
    assert [m.name for m in get_metrics()] == list(DEFAULT)
    assert [m.name for m in get_metrics(["noise_sensitivity_relevant"])] == ["noise_sensitivity_relevant"]


def test_every_metric_has_fields_direction_and_a_one_line_definition():
    for m in M.values():
        assert m.needs and m.definition and "\n" not in m.definition and m.problem
    lower = {n for n, m in M.items() if not m.higher_is_better}
    assert lower == {"noise_sensitivity_relevant", "noise_sensitivity_irrelevant"}
    assert all("lower is better" in M[n].definition for n in lower)


def test_metric_options_make_a_configured_copy_and_are_validated():
    ac = get_metrics(["answer_correctness"], {"answer_correctness": {"weights": "0.5,0.5", "beta": 2}})[0]
    assert dict(ac.options) == {"weights": (0.5, 0.5), "beta": 2.0}
    # the registered one unchanged
    assert dict(M["answer_correctness"].options) == {"weights": (0.75, 0.25), "beta": 1.0}
    assert M["answer_correctness"].with_options(weights=[1, 0]).uses_embedder is False
    with pytest.raises(ConfigError, match="unknown option.*valid: weights, beta"):
        M["answer_correctness"].with_options(weight=1)
    for bad in ([1], [-1, 1], [0, 0], "a,b"):
        with pytest.raises(ConfigError, match="weights"):
            M["answer_correctness"].with_options(weights=bad)
    with pytest.raises(ConfigError, match="beta"):
        M["factual_correctness"].with_options(beta=0)
    with pytest.raises(ConfigError, match="not chosen"):
        get_metrics(["faithfulness"], {"answer_correctness": {"beta": 2}})


# --- context entity recall -------------------------------------------------------------------------------------

ENTITY_REFERENCE = "Java was developed by Sun Microsystems in 1995 under James Gosling."


def test_context_entity_recall_asks_only_for_entities_not_written_verbatim():
    judge = FakeJudge([{"entities": ["Java", "Sun Corporation", "1995", "James Gosling", "java "]},
                       verdicts("yes", "no", "no")])
    r = M["context_entity_recall"].score(Scoring(sample(reference=ENTITY_REFERENCE), judge))

    extract, ask = judge.calls
    assert extract.prompt.name == "extract_entities" and extract.output is Entities
    assert ENTITY_REFERENCE in extract.prompt.user and sample.answer not in extract.prompt.user
    assert ask.prompt.name == "entities_in_contexts" and verdict_count(ask.output) == 3
    # "Java" is in a context verbatim (and "java " is the same entity): only the other three are asked
    assert '<entity id="1">\nSun Corporation\n</entity>' in ask.prompt.user and '<entity id="4">' not in ask.prompt.user
    assert contexts_of(ask.prompt) == sample.contexts
    assert r.value == 0.5
    assert r.evidence["entities"] == [
        {"entity": "Java", "in_contexts": True, "how": "verbatim"},
        {"entity": "Sun Corporation", "in_contexts": True, "how": "judge"},
        {"entity": "1995", "in_contexts": False, "how": "judge"},
        {"entity": "James Gosling", "in_contexts": False, "how": "judge"},
    ]


def test_entity_written_in_text_respects_word_edges_but_not_in_chinese():
    from localragas.metrics.context_entity_recall import written_in

    assert written_in("Java", "java is a language") and written_in("Sun  Microsystems", "by sun microsystems.")
    assert not written_in("Java", "javascript is a language") and not written_in("199", "in 1995")
    assert written_in("长城", "中国的长城很长") and written_in("1995年", "java于1995年发布")


def test_context_entity_recall_all_verbatim_makes_one_call():
    judge = FakeJudge([{"entities": ["Sun Microsystems", "Guido van Rossum"]}])
    r = M["context_entity_recall"].score(Scoring(sample(), judge))
    assert r.value == 1.0 and len(judge.calls) == 1


def test_context_entity_recall_unscored_and_zero_cases():
    judge = FakeJudge()
    assert M["context_entity_recall"].score(Scoring(sample(reference=None), judge)).unscored == "no_reference"
    assert judge.calls == []
    judge = FakeJudge([{"entities": []}])
    r = M["context_entity_recall"].score(Scoring(sample(), judge))
    assert r.unscored == "no_entities" and len(judge.calls) == 1
    judge = FakeJudge([{"entities": ["Sun", "1995"]}])
    r = M["context_entity_recall"].score(Scoring(sample(contexts=[]), judge))
    assert r.value == 0.0 and "no contexts" in r.evidence["note"] and len(judge.calls) == 1


# --- noise sensitivity -----------------------------------------------------------------------------------------

A = ["Java was developed by Sun Microsystems.", "Java was released in 1991.", "Java is owned by Google."]
R = ["Sun Microsystems developed Java.", "Java was released in 1995."]


def noise_judge() -> FakeJudge:
    return FakeJudge([
        {"claims": A},                 # the answer's claims
        {"claims": R},                 # the reference's claims
        verdicts("yes", "no"),         # reference claims in context 1: relevant
        verdicts("no", "no"),          # reference claims in context 2: irrelevant
        verdicts("yes", "yes", "no"),  # answer claims in context 1
        verdicts("no", "yes", "yes"),  # answer claims in context 2
        verdicts("yes", "no", "no"),   # answer claims in the reference: A2 and A3 are incorrect
    ])


def test_noise_sensitivity_both_modes_from_one_pass_of_judge_calls():
    judge = noise_judge()
    ctx = Scoring(sample(), judge)  # one sample's context: the two modes share its memo
    rel = M["noise_sensitivity_relevant"].score(ctx)
    irr = M["noise_sensitivity_irrelevant"].score(ctx)

    assert [c.prompt.name for c in judge.calls] == ["extract_claims"] * 2 + ["verify_statements"] * 5
    assert len(judge.calls) == 7  # the second mode reused the first's calls
    claims_a, claims_r, r1, r2, a1, a2, truth = (c.prompt for c in judge.calls)
    assert sample.answer in claims_a.user and sample.reference in claims_r.user
    assert contexts_of(r1) == [sample.contexts[0]] and all(x in r1.user for x in R)  # one context per call, as ragas
    assert contexts_of(r2) == [sample.contexts[1]]
    assert contexts_of(a1) == [sample.contexts[0]] and all(x in a1.user for x in A)
    assert contexts_of(truth) == [sample.reference]  # correctness: the answer's claims against the reference

    # A1 correct; A2 incorrect, in relevant context 1; A3 incorrect, only in irrelevant context 2
    assert math.isclose(rel.value, 1 / 3) and math.isclose(irr.value, 1 / 3)
    assert [c["counted"] for c in rel.evidence["claims"]] == [False, True, False]
    assert [c["counted"] for c in irr.evidence["claims"]] == [False, False, True]
    assert rel.evidence["claims"][1] == {"claim": A[1], "correct": False, "supported_by_relevant": True,
                                         "supported_by_irrelevant_only": False, "counted": True}
    assert rel.evidence["contexts"] == [{"rank": 1, "relevant": True}, {"rank": 2, "relevant": False}]
    assert rel.evidence["direction"] == "lower is better"
    assert not M["noise_sensitivity_relevant"].higher_is_better


def test_noise_sensitivity_claim_in_relevant_and_irrelevant_context_counts_for_relevant_only():
    judge = FakeJudge([{"claims": ["X."]}, {"claims": ["Y."]}, verdicts("yes"), verdicts("no"), verdicts("yes"),
                       verdicts("yes"), verdicts("no")])
    s = sample()
    assert M["noise_sensitivity_relevant"].score(Scoring(s, judge)).value == 1.0
    assert M["noise_sensitivity_irrelevant"].score(Scoring(s, judge)).value == 0.0


def test_noise_sensitivity_unscored_reasons():
    ns = M["noise_sensitivity_relevant"]
    judge = FakeJudge()
    assert ns.score(Scoring(sample(reference=None), judge)).unscored == "no_reference"
    assert ns.score(Scoring(sample(contexts=[]), judge)).unscored == "no_contexts"
    assert judge.calls == []
    judge = FakeJudge([{"claims": []}])
    assert ns.score(Scoring(sample(), judge)).unscored == "no_claims" and len(judge.calls) == 1
    judge = FakeJudge([{"claims": ["X."]}, {"claims": []}])
    assert ns.score(Scoring(sample(), judge)).unscored == "no_reference_claims" and len(judge.calls) == 2


# --- factual correctness and answer correctness ----------------------------------------------------------------

A3 = ["Java was developed by Sun Microsystems.", "Java was released in 1991.", "Java is owned by Google."]
R4 = ["Sun Microsystems developed Java.", "Java was released in 1995.", "James Gosling led the work.",
      "Java is object-oriented."]


def correctness_judge() -> FakeJudge:
    return FakeJudge([
        {"claims": A3},
        verdicts("yes", "yes", "no"),        # answer claims in the reference: TP 2, FP 1
        {"claims": R4},
        verdicts("yes", "yes", "no", "no"),  # reference claims in the answer: FN 2
    ])


def test_factual_correctness_f1_checks_each_text_against_the_other():
    judge = correctness_judge()
    r = M["factual_correctness"].score(Scoring(sample(), judge))

    ans, ans_check, ref, ref_check = (c.prompt for c in judge.calls)
    assert [c.prompt.name for c in judge.calls] == ["extract_claims", "verify_statements"] * 2
    assert sample.answer in ans.user and sample.reference in ref.user
    assert contexts_of(ans_check) == [sample.reference] and all(a in ans_check.user for a in A3)
    assert contexts_of(ref_check) == [sample.answer] and all(x in ref_check.user for x in R4)
    assert (r.evidence["tp"], r.evidence["fp"], r.evidence["fn"]) == (2, 1, 2)
    assert math.isclose(r.evidence["precision"], 2 / 3) and math.isclose(r.evidence["recall"], 0.5)
    assert math.isclose(r.value, 4 / 7)
    assert r.evidence["reference_coverage"] == 0.5
    assert [c["in_reference"] for c in r.evidence["answer_claims"]] == [True, True, False]
    assert [c["in_answer"] for c in r.evidence["reference_claims"]] == [True, True, False, False]


def test_factual_correctness_modes_share_calls_and_precision_asks_only_its_half():
    judge = FakeJudge([{"claims": A3}, verdicts("yes", "yes", "no")])
    r = M["factual_correctness_precision"].score(Scoring(sample(), judge))
    assert math.isclose(r.value, 2 / 3) and len(judge.calls) == 2 and "reference_claims" not in r.evidence
    judge = correctness_judge()
    ctx = Scoring(sample(), judge)
    f1 = M["factual_correctness"].score(ctx)
    rec = M["factual_correctness_recall"].score(ctx)
    prec = M["factual_correctness_precision"].score(ctx)
    assert len(judge.calls) == 4
    assert (prec.value, rec.value) == (pytest.approx(2 / 3), 0.5) and f1.value == pytest.approx(4 / 7)


def test_factual_correctness_beta_option():
    fc = M["factual_correctness"].with_options(beta=2.0)
    r = fc.score(Scoring(sample(), correctness_judge()))
    assert math.isclose(r.value, 10 / 19) and r.evidence["beta"] == 2.0


def test_f_beta():
    assert f_beta(0, 3, 3) == 0.0
    assert f_beta(2, 0, 0) == 1.0
    assert math.isclose(f_beta(2, 1, 2), 4 / 7)
    assert math.isclose(f_beta(1, 0, 1, beta=0.5), (1.25 * 0.5) / (0.25 + 0.5))


def test_factual_correctness_unscored_reasons():
    fc = M["factual_correctness"]
    judge = FakeJudge()
    assert fc.score(Scoring(sample(reference=None), judge)).unscored == "no_reference"
    assert fc.score(Scoring(sample(answer=" "), judge)).unscored == "no_claims"
    assert judge.calls == []
    judge = FakeJudge([{"claims": []}])
    assert fc.score(Scoring(sample(), judge)).unscored == "no_claims"
    judge = FakeJudge([{"claims": ["X."]}, verdicts("yes"), {"claims": []}])
    r = fc.score(Scoring(sample(), judge))
    assert r.unscored == "no_reference_claims" and len(judge.calls) == 3


def answer_reference_embedder() -> StubEmbedder:
    return StubEmbedder({sample.answer: [1.0, 0.0], sample.reference: [0.6, 0.8]})  # cosine 0.6


def test_answer_correctness_weights_factuality_and_similarity():
    emb = answer_reference_embedder()
    judge = correctness_judge()
    ctx = Scoring(sample(), judge, emb)
    r = M["answer_correctness"].score(ctx)
    assert math.isclose(r.value, 0.75 * 4 / 7 + 0.25 * 0.6)
    assert math.isclose(r.evidence["factuality"], 4 / 7) and math.isclose(r.evidence["similarity"], 0.6)
    assert r.evidence["weights"] == [0.75, 0.25]
    assert emb.seen == [[sample.answer, sample.reference]]
    # factual correctness on the same sample (its context) asks nothing more
    assert M["factual_correctness"].score(ctx).value == pytest.approx(4 / 7)
    assert len(judge.calls) == 4


def test_answer_correctness_configurable_weights_and_no_embedder_when_similarity_weight_is_zero():
    r = M["answer_correctness"].with_options(weights=(1, 1)).score(Scoring(sample(), correctness_judge(),
                                                                  answer_reference_embedder()))
    assert math.isclose(r.value, (4 / 7 + 0.6) / 2)
    only_facts = M["answer_correctness"].with_options(weights=(1, 0))
    r = only_facts.score(Scoring(sample(), correctness_judge(), None))
    assert math.isclose(r.value, 4 / 7) and r.evidence["similarity"] is None
    with pytest.raises(ConfigError, match="embedder"):
        M["answer_correctness"].score(Scoring(sample(), correctness_judge(), None))


def test_answer_correctness_unscored_reasons():
    emb = answer_reference_embedder()
    assert M["answer_correctness"].score(Scoring(sample(reference=None), FakeJudge(), emb)).unscored == "no_reference"
    assert M["answer_correctness"].score(Scoring(sample(), FakeJudge([{"claims": []}]), emb)).unscored == "no_claims"


# --- semantic similarity ---------------------------------------------------------------------------------------


def test_semantic_similarity_is_the_cosine_without_a_judge():
    judge = FakeJudge()
    r = M["semantic_similarity"].score(Scoring(sample(), judge, answer_reference_embedder()))
    assert math.isclose(r.value, 0.6) and judge.calls == []
    assert "language" not in r.evidence  # no judge, no prompt language


def test_semantic_similarity_clamps_threshold_and_unscored():
    neg = StubEmbedder({sample.answer: [1.0, 0.0], sample.reference: [-1.0, 0.1]})
    assert M["semantic_similarity"].score(Scoring(sample(), FakeJudge(), neg)).value == 0.0
    t = M["semantic_similarity"].with_options(threshold=0.5)
    r = t.score(Scoring(sample(), FakeJudge(), answer_reference_embedder()))
    assert r.value == 1.0 and r.evidence["similarity"] == pytest.approx(0.6)
    assert t.with_options(threshold=0.7).score(Scoring(sample(), FakeJudge(), answer_reference_embedder())).value == 0.0
    assert M["semantic_similarity"].score(Scoring(sample(reference=None), FakeJudge(), neg)).unscored == "no_reference"
    with pytest.raises(ConfigError, match="embedder"):
        M["semantic_similarity"].score(Scoring(sample(), FakeJudge(), None))


# --- context relevance -----------------------------------------------------------------------------------------


def test_context_relevance_averages_two_differently_worded_ratings():
    judge = FakeJudge([{"rating": 2}, {"rating": 1}])
    r = M["context_relevance"].score(Scoring(sample(), judge))
    first, second = judge.calls
    assert first.output is Rating and second.output is Rating
    assert first.prompt.name == second.prompt.name == "rate_context_relevance"
    assert first.prompt.user != second.prompt.user
    for p in (first.prompt, second.prompt):
        assert contexts_of(p) == sample.contexts and sample.question in p.user and sample.answer not in p.user
    assert r.value == 0.75 and r.evidence["ratings"] == [2, 1]


def test_context_relevance_unscored_and_echo_cases():
    judge = FakeJudge()
    assert M["context_relevance"].score(Scoring(sample(contexts=[]), judge)).unscored == "no_contexts"
    assert M["context_relevance"].score(Scoring(sample(contexts=["  "]), judge)).unscored == "no_contexts"
    r = M["context_relevance"].score(Scoring(sample(contexts=[sample.question]), judge))
    assert r.value == 0.0 and "repeat the question" in r.evidence["note"]
    assert judge.calls == []


def test_context_relevance_rejects_a_rating_outside_0_1_2():
    from localragas.core.errors import JudgeError

    with pytest.raises(JudgeError):
        M["context_relevance"].score(Scoring(sample(), FakeJudge([{"rating": 3}])))


def test_context_relevance_cuts_contexts_that_do_not_fit_the_window():
    long = ["word " * 3000, "other " * 3000]
    judge = FakeJudge([{"rating": 1}, {"rating": 1}], n_ctx=2048)
    r = M["context_relevance"].score(Scoring(sample(contexts=long), judge))
    assert r.value == 0.5 and "did not fit" in r.evidence["warnings"][0]
    for c in judge.calls:
        assert len(c.prompt.text()) < 2048 * 3


# --- id-based context precision and recall ---------------------------------------------------------------------


def test_id_based_precision_and_recall_need_no_judge():
    s = sample(retrieved_context_ids=["d1", 7, "d3", "d1"], reference_context_ids=["7", "d1", "d9"])
    judge = FakeJudge()
    p = M["id_based_context_precision"].score(Scoring(s, judge))
    r = M["id_based_context_recall"].score(Scoring(s, judge))
    assert judge.calls == []
    assert math.isclose(p.value, 2 / 3)  # d1, 7 (= "7") of d1, 7, d3; the repeated d1 counts once
    assert p.evidence["retrieved"] == [{"rank": 1, "id": "d1", "relevant": True},
                                       {"rank": 2, "id": "7", "relevant": True},
                                       {"rank": 3, "id": "d3", "relevant": False}]
    assert math.isclose(r.value, 2 / 3)
    assert r.evidence["reference"][2] == {"id": "d9", "retrieved": False}


def test_id_based_unscored_reasons():
    p, r = M["id_based_context_precision"], M["id_based_context_recall"]
    judge = FakeJudge()
    assert p.score(Scoring(sample(), judge)).unscored == "no_reference_context_ids"
    assert r.score(Scoring(sample(), judge)).unscored == "no_reference_context_ids"
    s = sample(reference_context_ids=["a"])
    assert p.score(Scoring(s, judge)).unscored == "no_retrieved_context_ids"
    assert r.score(Scoring(s, judge)).unscored == "no_retrieved_context_ids"
    s = sample(reference_context_ids=["a"], retrieved_context_ids=[])
    assert p.score(Scoring(s, judge)).unscored == "no_retrieved_context_ids"
    assert r.score(Scoring(s, judge)).value == 0.0
    assert r.score(Scoring(sample(reference_context_ids=[], retrieved_context_ids=["a"]), judge)).unscored == \
        "no_reference_context_ids"


# --- the fake judge's heuristic covers every output --------------------------------------------------------------


def test_fake_heuristic_scores_every_metric():
    from localragas.judges.embeddings import get_embedder

    judge = FakeJudge()
    judging = Judging(judge)
    s = sample(retrieved_context_ids=["a"], reference_context_ids=["a"])
    talk = conversation_samples({"messages": [{"role": "user", "content": "I live in Oslo."},
                                              {"role": "assistant", "content": "Noted."},
                                              {"role": "user", "content": s.question},
                                              {"role": "assistant", "content": s.answer}]})[-1]
    for m in M.values():
        r = m.score(Scoring(talk if "turn" in m.needs else s, judging, get_embedder("fake")))
        assert r.value is not None and 0.0 <= r.value <= 1.0, (m.name, r)
    assert judging.stats.failed_calls == 0
    assert {c.output for c in judge.calls} >= {Claims, Entities, Rating}
    assert any(issubclass(c.output, Verdicts) for c in judge.calls)
