"""The scoring context (localragas.judge_calls.sample_context): a metric's score depends on the context it is given and
nothing else; the work several metrics of a sample share is done once per context, never shared across samples."""
from __future__ import annotations

import threading

from localragas.judges.embeddings import get_embedder
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.data.schema import Sample
from localragas.judge_calls.sample_context import Scoring

M = all_metrics()
EN = Sample(id="en", question="Who developed Java?", contexts=["Java was developed by Sun Microsystems in 1995."],
            answer="Java was developed by Sun Microsystems. It was released in 1995.",
            reference="Sun Microsystems developed Java. It was released in 1995.")
ZH = Sample(id="zh", question="Java由谁开发？", contexts=["Java最初由Sun公司于1995年开发。"],
            answer="Java由Sun公司开发。它于1995年发布。",
            reference="Java是Sun公司开发的。它于1995年发布。")
NAMES = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_entity_recall",
         "noise_sensitivity_relevant", "factual_correctness", "answer_correctness", "context_relevance"]


def scored(sample: Sample, judge: FakeJudge) -> dict:
    ctx = Scoring(sample, judge, get_embedder("fake"))
    return {n: M[n].score(ctx).model_dump() for n in NAMES}


def test_two_languages_interleaved_in_two_threads_score_as_alone():
    alone = {s.id: scored(s, FakeJudge()) for s in (EN, ZH)}
    assert alone["zh"]["faithfulness"]["evidence"]["language"] == "zh"
    assert alone["en"]["faithfulness"]["evidence"]["language"] == "en"
    judge = FakeJudge(record=False)  # one judge, both threads
    got: dict[str, list[dict]] = {"en": [], "zh": []}
    start = threading.Barrier(2)

    def work(s: Sample) -> None:
        start.wait()
        for _ in range(3):
            got[s.id].append(scored(s, judge))

    threads = [threading.Thread(target=work, args=(s,)) for s in (EN, ZH)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["en"] == [alone["en"]] * 3 and got["zh"] == [alone["zh"]] * 3


def test_the_memo_is_shared_by_the_metrics_of_one_context_and_not_across_contexts():
    judge = FakeJudge()
    ctx = Scoring(EN, judge)
    M["factual_correctness"].score(ctx)
    asked = len(judge.calls)
    M["factual_correctness_recall"].score(ctx)
    M["noise_sensitivity_relevant"].score(ctx)
    names = [c.prompt.name for c in judge.calls[asked:]]
    assert "extract_claims" not in names  # both sides' claims came from the memo
    assert asked and set(ctx.memo) >= {"answer_claims", "reference_claims"}
    again = FakeJudge()
    M["factual_correctness"].score(Scoring(EN, again))  # the same sample, a new context: asked afresh
    assert [c.prompt.name for c in again.calls] == [c.prompt.name for c in judge.calls[:asked]]


def test_each_metric_lists_only_the_warnings_of_the_work_it_used():
    long_answer = " ".join(f"Station {i} measured {i} millimetres of rain on day {i}." for i in range(40))
    s = EN.model_copy(update={"answer": long_answer})
    ctx = Scoring(s, FakeJudge())
    fc = M["factual_correctness"].score(ctx)
    relevance = M["context_relevance"].score(ctx)
    again = M["factual_correctness_precision"].score(ctx)  # from the memo: its warnings come with it
    assert any("split into" in w for w in fc.evidence["warnings"])
    assert "warnings" not in relevance.evidence
    assert again.evidence["warnings"] == [w for w in fc.evidence["warnings"] if w in again.evidence["warnings"]]
    assert any("split into" in w for w in again.evidence["warnings"])


def test_the_context_log_holds_the_samples_calls_and_the_judge_keeps_none_of_them():
    judge = FakeJudge()
    ctx = Scoring(EN, judge)
    M["faithfulness"].score(ctx)
    assert [r["prompt"] for r in ctx.log.records] == [c.prompt.name for c in judge.calls]
    assert ctx.log.stats.calls == len(judge.calls) == ctx.judging.stats.calls
    assert ctx.judging.log.records == [] and not hasattr(judge, "log")
