"""evaluate() and score_sample(): failures stay per sample and per metric; summaries, categories, run metadata."""
from __future__ import annotations

import pytest

import localragas.run.runner as runner
from localragas.judges.embeddings import HashingEmbedder
from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge, Judging
from localragas.metrics import all_metrics
from localragas.metrics.registry import default_metric_names
from localragas.run.runner import evaluate
from localragas.run.scoring import score_sample
from localragas.data.schema import Report, Sample, SkippedRow

DEFAULT = tuple(default_metric_names())  # the four RAGAS core metrics

CTX = ["Paris is the capital of France.", "Berlin is the capital of Germany."]


def p_yes(p: float) -> dict:
    """A graded verdict reply (the default verdicts): P(yes) = p."""
    return {"p_yes": p, "mass": 1.0}


def mk(id_: str, category: str | None = None, **kw) -> Sample:
    base = dict(id=id_, question=f"Question for {id_}?", contexts=list(CTX),
                answer=f"Paris is the capital of France. Marker {id_}.", reference="Paris is the capital of France.",
                category=category)
    base.update(kw)
    return Sample(**base)


def no_embedder(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("get_embedder must not be called")

    monkeypatch.setattr(runner, "get_embedder", boom)


def test_judge_error_on_one_sample_leaves_the_others_scored(monkeypatch):
    no_embedder(monkeypatch)

    def respond(prompt, output):
        if "Marker bad." in prompt.user:
            return JudgeError("reply truncated at the token limit (2048 tokens)")
        return {"p_yes": 1.0, "mass": 1.0}  # a graded verdict of one of the answer's sentences (the default)

    judge = FakeJudge(responder=respond)
    report = evaluate([mk("a"), mk("bad"), mk("c")], metrics=["faithfulness"], judge=judge)

    by_id = {s.id: s.metrics["faithfulness"] for s in report.samples}
    assert by_id["bad"].value is None
    assert by_id["bad"].unscored.startswith("judge_error:")
    assert "truncated" in by_id["bad"].unscored
    assert by_id["a"].value == 1.0 and by_id["c"].value == 1.0
    s = report.summary_for("faithfulness")
    assert (s.scored, s.unscored, s.unscored_reasons) == (2, 1, {"judge_error": 1})
    assert s.mean == 1.0
    assert report.meta["judge_stats"]["failed_calls"] == 1


def test_unexpected_metric_exception_is_recorded_and_the_run_completes(monkeypatch):
    no_embedder(monkeypatch)
    faith = all_metrics()["faithfulness"]
    real = type(faith).measure

    def flaky(ctx):
        if ctx.sample.id == "b":
            raise ValueError("boom in metric")
        return real(faith, ctx)

    monkeypatch.setattr(faith, "measure", flaky)
    report = evaluate([mk("a"), mk("b"), mk("c")], metrics=["faithfulness", "context_precision"],
                      judge=FakeJudge())

    b = next(s for s in report.samples if s.id == "b")
    assert b.metrics["faithfulness"].unscored == "error: ValueError: boom in metric"
    assert b.metrics["context_precision"].scored  # the other metric on the same sample still ran
    assert [s.id for s in report.samples] == ["a", "b", "c"]
    assert all(s.metrics["faithfulness"].scored for s in report.samples if s.id != "b")
    assert report.summary_for("faithfulness").unscored_reasons == {"error": 1}


def test_responder_raising_a_non_judge_error_is_an_error_result(monkeypatch):
    no_embedder(monkeypatch)

    def respond(prompt, output):
        raise RuntimeError("backend crashed")

    report = evaluate([mk("a")], metrics=["faithfulness"], judge=FakeJudge(responder=respond))
    assert report.samples[0].metrics["faithfulness"].unscored == "error: RuntimeError: backend crashed"


def test_summary_means_exclude_unscored(monkeypatch):
    no_embedder(monkeypatch)
    # a: 2 sentences, P(supported) 0.8 and 0.2 (0.5); b: 1 sentence, 1.0; c: a blank answer -> unscored, unasked
    judge = FakeJudge([p_yes(0.8), p_yes(0.2), p_yes(1.0)])
    samples = [mk("a"), mk("b", answer="Marker b."), mk("c", answer=" ")]
    report = evaluate(samples, metrics=["faithfulness"], judge=judge)
    values = [s.metrics["faithfulness"].value for s in report.samples]
    assert values == [0.5, 1.0, None]
    s = report.summary_for("faithfulness")
    assert s.mean == 0.75  # (0.5 + 1.0) / 2, not / 3
    assert (s.scored, s.unscored, s.unscored_reasons) == (2, 1, {"no_claims": 1})
    assert [sr.judge_calls for sr in report.samples] == [2, 1, 0]
    assert [c.prompt.name for c in judge.calls] == ["verify_statement"] * 3


def test_by_category(monkeypatch):
    no_embedder(monkeypatch)
    judge = FakeJudge([
        p_yes(1.0), p_yes(0.0),  # a: 1.0
        p_yes(0.0), p_yes(0.0),  # b: 0.0
        p_yes(0.0), p_yes(1.0),  # c: 0.5
        p_yes(1.0), p_yes(1.0),  # d: 1.0
    ])
    samples = [mk("a", "docs"), mk("b", "hr"), mk("c", "docs"), mk("d")]
    report = evaluate(samples, metrics=["context_precision"], judge=judge)
    assert sorted(report.by_category) == ["docs", "hr"]  # uncategorised samples form no group
    docs = report.by_category["docs"][0]
    assert docs.metric == "context_precision" and docs.mean == 0.75 and docs.scored == 2
    assert report.by_category["hr"][0].mean == 0.0
    assert report.summary_for("context_precision").mean == pytest.approx(2.5 / 4)


def test_report_meta(monkeypatch):
    no_embedder(monkeypatch)
    judge = FakeJudge(name="scripted")
    skipped = [SkippedRow(path="x.jsonl", line=3, field="answer", reason="missing required field")]
    report = evaluate([mk("a"), mk("b")], metrics=["faithfulness", "context_recall"], judge=judge,
                      thresholds={"faithfulness": 0.9, "answer_relevancy": 0.1}, skipped=skipped)
    meta = report.meta
    assert meta["judge"] == {"name": "scripted", "fingerprint": "fake:scripted"}
    # only chosen metrics carry thresholds; overrides win over defaults
    assert meta["thresholds"] == {"faithfulness": 0.9, "context_recall": all_metrics()["context_recall"].threshold}
    assert isinstance(meta["wall_seconds"], float) and meta["wall_seconds"] >= 0
    assert meta["samples"] == 2
    assert meta["embedder"] is None
    assert meta["judge_stats"]["calls"] == len(judge.calls) > 0  # a fake judge built in code: no judge check
    assert "pydantic" in meta["versions"]
    assert report.metrics == ["faithfulness", "context_recall"]
    assert report.skipped == skipped
    assert [g.metric for g in report.gate.results] == ["faithfulness", "context_recall"]
    # the report round-trips through JSON
    assert Report.model_validate_json(report.model_dump_json()) == report


def test_embedder_not_loaded_without_answer_relevancy(monkeypatch):
    no_embedder(monkeypatch)
    report = evaluate([mk("a")], metrics=["faithfulness"], judge=FakeJudge(), embedder=None)
    assert report.samples[0].metrics["faithfulness"].scored
    assert report.meta["embedder"] is None


def test_embedder_loaded_by_name_for_answer_relevancy(monkeypatch):
    asked = []

    def fake_get(spec=None, device=None):
        asked.append(spec)
        return HashingEmbedder()

    monkeypatch.setattr(runner, "get_embedder", fake_get)
    report = evaluate([mk("a")], metrics=["answer_relevancy"], judge=FakeJudge(), embedder="fake")
    assert asked == ["fake"]
    assert report.meta["embedder"] == {"name": "fake"}
    assert report.samples[0].metrics["answer_relevancy"].scored


def test_embedder_instance_is_used_as_is(monkeypatch):
    no_embedder(monkeypatch)
    emb = HashingEmbedder()
    report = evaluate([mk("a")], metrics=["answer_relevancy"], judge=FakeJudge(), embedder=emb)
    assert 0.0 <= report.samples[0].metrics["answer_relevancy"].value <= 1.0


def test_judge_by_name(monkeypatch):
    no_embedder(monkeypatch)
    report = evaluate([mk("a")], metrics=["faithfulness"], judge="fake")
    assert report.meta["judge"]["name"] == "fake"


def test_unknown_metric_is_a_config_error():
    with pytest.raises(ConfigError, match="bogus"):
        evaluate([mk("a")], metrics=["bogus"], judge=FakeJudge())


def test_all_metrics_by_default(monkeypatch):
    no_embedder(monkeypatch)
    report = evaluate([mk("a")], judge=FakeJudge(), embedder=HashingEmbedder())
    assert report.metrics == list(DEFAULT)  # the four RAGAS core metrics
    assert set(report.samples[0].metrics) == set(DEFAULT)
    assert set(report.meta["thresholds"]) == set(DEFAULT)


def test_gate_disabled_passes(monkeypatch):
    no_embedder(monkeypatch)
    judge = FakeJudge([p_yes(0.0), p_yes(0.0)])  # the answer's two sentences
    report = evaluate([mk("a")], metrics=["faithfulness"], judge=judge, gate=False)
    assert report.summary_for("faithfulness").mean == 0.0
    assert report.gate.enabled is False and report.gate.passed is True


def test_score_sample_counts_calls_and_keeps_metric_order():
    judging = Judging(FakeJudge())
    metrics = [all_metrics()["context_recall"], all_metrics()["faithfulness"]]
    out = score_sample(mk("a", "cat"), metrics, judging, None)
    assert list(out.metrics) == ["context_recall", "faithfulness"]
    assert out.judge_calls == judging.stats.calls == 4
    assert out.category == "cat" and out.seconds >= 0


def test_progress_lines_on_a_non_tty(monkeypatch, capsys):
    no_embedder(monkeypatch)
    evaluate([mk("a"), mk("b")], metrics=["context_precision"], judge=FakeJudge(), progress=True)
    err = capsys.readouterr().err
    assert "localragas: 2/2 samples (100%)" in err
