"""research.benchmarks.ragas_agreement without a model and without ragas: the rows -> ragas job mapping, the
agreement and NaN accounting on fabricated ragas results, the side-by-side table, and resume."""
from __future__ import annotations

import json

import pytest

from localragas.quality.agreement import binary_agreement, graded_agreement, pairwise_agreement
from localragas.quality.calibration_results import CalibrationRun
from localragas.quality.labelled import load_labelled, take

from cli_helpers import write_jsonl
from research.accuracy import calibrate_all
from research.benchmarks import ragas_agreement as ra

CTX = "The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889."




def _row(i, metric, value, kind="binary", answer="The tower is in Paris.", contexts=(CTX,), reference=None, **extra):
    return {"id": f"r{i}", "question": "Where is the Eiffel Tower?", "contexts": list(contexts), "answer": answer,
            "reference": reference, "label": {"metric": metric, "value": value, "kind": kind}, "source": "test",
            "meta": {"n": i}, **extra}


def _pairs(n: int) -> list[dict]:
    rows = []
    for p in range(n):
        for better in (False, True):
            rows.append(_row(f"{p}-{int(better)}", "answer_relevancy", int(better), kind="pairwise", contexts=(),
                             pair=f"p{p}", better=better))
    return rows


def _record(job, value=None, nan=False, exception=None, seconds=2.0):
    return {"sample": job.key, "metric": job.variant, "seconds": seconds, "calls": 3, "prompt_tokens": 100,
            "completion_tokens": 20, "value": value, "nan": nan, "parse_errors": 0, "exception": exception,
            "note": None, "ragas_metric": job.ragas_class, "failed_requests": 0}


def _records(jobs, values):
    """values: a float, "nan", "timeout", "error" or None (no record) per job."""
    out = {}
    for job, v in zip(jobs, values):
        if v is None:
            continue
        failures = {"nan": {"nan": True}, "timeout": {"exception": "TimeoutError: no result within 5 s"},
                    "error": {"exception": "OutputParserException: bad json"}}
        out[(job.key, job.variant)] = _record(job, **failures[v]) if isinstance(v, str) else _record(job, value=v)
    return out


# ---------------------------------------------------------------------------------------------- row -> ragas job


def test_each_label_metric_maps_to_the_ragas_metric_and_fields(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        _row(0, "faithfulness", 1),
        _row(1, "answer_relevancy", 0, contexts=()),
        _row(2, "context_recall", 1, answer="", reference="The tower is in Paris."),
        _row(3, "context_precision", 1, answer="", reference="Paris."),
        _row(4, "context_precision", 1),
        # a WikiQA row: no answer, no reference; the per-chunk human labels in meta must not reach ragas
        _row(5, "context_precision", 0.5, kind="graded", answer="", contexts=(CTX, "Other."),
             meta={"relevance": [1, 0]}),
    ])
    jobs = ra.plan_file(path, None)
    assert [j.variant for j in jobs] == ["faithfulness", "answer_relevancy", "context_recall", "context_precision",
                                         "context_precision_without_reference", "context_relevance"]
    assert [j.ragas_class for j in jobs] == ["Faithfulness", "ResponseRelevancy", "LLMContextRecall",
                                             "LLMContextPrecisionWithReference", "LLMContextPrecisionWithoutReference",
                                             "ContextRelevance"]
    assert all(j.missing == () for j in jobs)
    assert jobs[0].key == "mixed.jsonl/r0"
    fields = [ra.ragas_fields(j.row.sample) for j in jobs]
    assert fields[0] == {"user_input": "Where is the Eiffel Tower?", "retrieved_contexts": [CTX],
                         "response": "The tower is in Paris.", "reference": None}
    assert fields[1]["retrieved_contexts"] == []
    assert fields[2]["response"] is None and fields[2]["reference"] == "The tower is in Paris."
    assert fields[5] == {"user_input": "Where is the Eiffel Tower?", "retrieved_contexts": [CTX, "Other."],
                         "response": None, "reference": None}


def test_a_row_without_the_fields_its_variant_needs_is_not_sent_and_counts_unscored(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [_row(0, "faithfulness", 1, answer=""), _row(1, "faithfulness", 0)])
    jobs = ra.plan_file(path, None)
    assert jobs[0].missing == ("response",) and jobs[1].missing == ()
    assert ra.to_run(jobs, {}) == [jobs[1]]
    score, why = ra.outcome(jobs[0], None)
    assert score is None and why.startswith("missing_input: ragas Faithfulness needs response")


def test_variant_override_and_its_validation(tmp_path):
    path = write_jsonl(tmp_path / "cp.jsonl", [_row(0, "context_precision", 1, answer="")])
    [job] = ra.plan_file(path, None, "context_precision_without_reference")
    assert job.variant == "context_precision_without_reference" and job.missing == ("response",)
    with pytest.raises(SystemExit, match="unknown ragas variant"):
        ra.parse_args(["--ragas-metric-for", "cp=ContextPrecision"])
    with pytest.raises(SystemExit, match="NAME=N"):
        ra.parse_args(["--limit-for", "cp=0"])
    args = ra.parse_args(["--limit-for", "wikiqa=60", "--ragas-metric-for", "ranked=context_relevance"])
    assert ra.pick(args.limit_for, "context_precision_wikiqa.jsonl", 24) == 60
    assert ra.pick(args.limit_for, "qags_faithfulness.jsonl", 24) == 24
    assert ra.pick(args.ragas_metric_for, "context_precision_ranked_wikiqa.jsonl") == "context_relevance"


def test_rows_are_the_ones_calibrate_takes_pairs_kept_whole(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", _pairs(4))
    jobs = ra.plan_file(path, 3)
    assert [j.row.sample.id for j in jobs] == [r.sample.id for r in take(load_labelled(path), 3)]
    assert len(jobs) == 4  # two pairs: the second pair begins within the limit


# ------------------------------------------------------------------------------------- agreement, NaN accounting


def test_binary_agreement_counts_nan_and_failures_as_unscored_like_calibrate(tmp_path):
    labels = [1, 1, 1, 0, 0, 0]
    path = write_jsonl(tmp_path / "b.jsonl", [_row(i, "faithfulness", v) for i, v in enumerate(labels)])
    jobs = ra.plan_file(path, None)
    records = _records(jobs, [1.0, 0.8, "nan", 0.2, "timeout", 0.9])
    [c] = ra.ragas_calibrations(str(path), jobs, records, resamples=200)
    assert (c.rows, c.scored, c.unscored) == (6, 4, 2)
    assert c.unscored_reasons == {"nan": 1, "timeout": 1}
    assert c.metric == "Faithfulness" and c.label_metric == "faithfulness" and c.kind == "binary"
    expected = binary_agreement(labels, [1.0, 0.8, None, 0.2, None, 0.9], 0.80, resamples=200)
    assert c.agreement == expected
    assert c.agreement.counted_wrong["roc_auc"].value < c.agreement.measures["roc_auc"].value
    assert c.seconds_per_sample == 2.0 and c.judge_calls == 18
    by_id = {o.id: o for o in c.per_row}
    assert by_id["r2"].unscored == "nan: ragas returned NaN"
    assert by_id["r4"].unscored.startswith("timeout: TimeoutError")
    assert by_id["r0"].score == 1.0 and by_id["r0"].label == 1.0


def test_rows_not_yet_scored_count_as_not_run(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [_row(i, "faithfulness", i % 2) for i in range(4)])
    jobs = ra.plan_file(path, None)
    [c] = ra.ragas_calibrations(str(path), jobs, _records(jobs, [0.9, 0.1, None, "error"]), resamples=50)
    assert c.unscored_reasons == {"error": 1, "not_run": 1}
    assert c.seconds_per_sample == 2.0  # over the rows with a ragas run


def test_graded_and_pairwise_agreement_as_calibrate_computes_them(tmp_path):
    graded = [0.0, 0.25, 0.5, 1.0]
    path = write_jsonl(tmp_path / "g.jsonl", [_row(i, "context_precision", v, kind="graded", answer="")
                                         for i, v in enumerate(graded)])
    jobs = ra.plan_file(path, None)
    [c] = ra.ragas_calibrations(str(path), jobs, _records(jobs, [0.0, 0.5, "nan", 1.0]), resamples=100)
    assert c.metric == "ContextRelevance"
    assert c.agreement == graded_agreement(graded, [0.0, 0.5, None, 1.0], resamples=100)
    assert any("question alone" in n for n in c.notes)

    path = write_jsonl(tmp_path / "p.jsonl", _pairs(3))
    jobs = ra.plan_file(path, None)  # rows: p0 worse, p0 better, p1 worse, ...
    [c] = ra.ragas_calibrations(str(path), jobs, _records(jobs, [0.2, 0.9, "nan", 0.7, 0.6, 0.5]), resamples=100)
    assert (c.rows, c.pairs, c.unscored) == (6, 3, 1)
    assert c.agreement == pairwise_agreement([0.9, 0.7, 0.5], [0.2, None, 0.6], resamples=100)
    assert c.agreement.measures["pairwise_agreement"].value == 0.5  # over the two complete pairs
    assert c.agreement.counted_wrong["pairwise_agreement"].value == pytest.approx(1 / 3)  # the NaN pair misordered


# --------------------------------------------------------------------------------------------------------- table


def test_the_table_puts_localragas_and_ragas_side_by_side(tmp_path):
    labels = [1, 1, 0, 0]
    path = write_jsonl(tmp_path / "qags_faithfulness.jsonl", [_row(i, "faithfulness", v) for i, v in enumerate(labels)])
    jobs = ra.plan_file(path, None)
    ragas = ra.ragas_calibrations(str(path), jobs, _records(jobs, [1.0, "timeout", 0.0, 1.0]), resamples=50)[0]
    ours = ra.ragas_calibrations(str(path), jobs, _records(jobs, [1.0, 0.9, 0.1, 0.0]), resamples=50)[0]
    ours.metric, ours.label_metric, ours.seconds_per_sample = "faithfulness", None, 11.8
    table = ra.render_table([(ragas, ours)], ours_given=True)
    lines = table.splitlines()
    assert lines[0].startswith("| file | metric | rows | agreement | localragas [95% CI] | localragas unscored | "
                               "localragas s/sample | ragas [95% CI] | ragas NaN / failed | ragas s/sample |")
    auc = next(line for line in lines if "| ROC AUC |" in line)
    cells = [x.strip() for x in auc.strip("|").split("|")]
    assert cells[0] == "qags\\_faithfulness.jsonl" and cells[1] == "faithfulness (ragas Faithfulness)"
    assert cells[2] == "4"
    assert cells[4].startswith("1.000") and "counted wrong" not in cells[4]
    assert cells[5] == "0" and cells[6] == "11.80"
    assert cells[7].startswith("0.750") and "; counted wrong 0.375" in cells[7]  # a tie with a bad row: half
    assert cells[8] == "1 (timeout 1)" and cells[9] == "2.00"
    assert "balanced accuracy @ gate" in table and "balanced accuracy @ best" in table
    assert "other rows" not in table
    if "metric_options" in type(ours).model_fields:  # localragas's metric settings are named
        ours.metric_options = {"verdicts": "probability"}
        assert "faithfulness (ragas Faithfulness; localragas faithfulness verdicts=probability)" in \
            ra.render_table([(ragas, ours)], ours_given=True)

    ours.per_row = ours.per_row[:3]
    ours.rows = 3
    assert "localragas's figures are from other rows" in ra.render_table([(ragas, ours)], ours_given=True)
    alone = ra.render_table([(ragas, None)], ours_given=False)
    assert "localragas" not in alone.splitlines()[0] and alone.splitlines()[0].count("|") == 8
    assert "no localragas result" in ra.render_table([(ragas, None)], ours_given=True)


# ---------------------------------------------------------------------------------------------------- resume


def test_resume_skips_rows_done_and_retries_failed_ones_only_when_asked(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [_row(i, "faithfulness", i % 2) for i in range(4)])
    jobs = ra.plan_file(path, None)
    rows_file = tmp_path / "ragas_rows.jsonl"
    lines = [_record(jobs[0], value=1.0), _record(jobs[1], exception="TimeoutError: no result within 5 s"),
             _record(jobs[2], value=0.3)]
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"sample": "b.jsonl/r3", "met')
    done = ra.read_records(rows_file)
    assert set(done) == {(j.key, "faithfulness") for j in jobs[:3]}  # the cut-short last line is ignored
    assert ra.to_run(jobs, done) == [jobs[3]]
    assert ra.to_run(jobs, done, retry_failed=True) == [jobs[1], jobs[3]]
    # a later record of a row wins (a retried row)
    with open(rows_file, "a") as f:
        f.write("\n" + json.dumps(_record(jobs[1], value=0.5)) + "\n")
    assert ra.read_records(rows_file)[(jobs[1].key, "faithfulness")]["value"] == 0.5
    # another variant for a row: scored again
    other = ra.plan_file(path, None, "context_relevance")
    assert ra.to_run(other, done) == other


def test_check_resume_refuses_another_judge_and_fresh_starts_over(tmp_path):
    out = tmp_path / "out"
    identity = {"judge_file": "a.gguf", "judge_sha256": "aa", "n_ctx": 8192}
    ra.check_resume(out, identity, fresh=False)
    (out / ra.ROWS_FILE).write_text('{"sample": "x/1", "metric": "faithfulness", "value": 1.0}\n')
    ra.check_resume(out, identity, fresh=False)  # same judge: fine
    with pytest.raises(SystemExit, match="judge_sha256"):
        ra.check_resume(out, {**identity, "judge_sha256": "bb"}, fresh=False)
    ra.check_resume(out, {**identity, "judge_sha256": "bb"}, fresh=True)
    assert not (out / ra.ROWS_FILE).exists()
    assert json.loads((out / ra.ROWS_META).read_text())["judge_sha256"] == "bb"


def _fake_ragas(values: dict[str, float | str]):
    """A stand-in for run_ragas: appends a record per job, as the child does; remembers what it was asked."""
    calls: list[list[str]] = []

    def run(jobs, args, judge_path, alias, rows_file):
        calls.append([j.key for j in jobs])
        with open(rows_file, "a") as f:
            for j in jobs:
                v = values[j.row.sample.id]
                record = _record(j, nan=True) if v == "nan" else _record(j, value=v)
                f.write(json.dumps(record) + "\n")
        return {"ragas": "0.4.3"}

    return run, calls


def test_main_scores_resumes_and_compares_with_calibrate_all_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "bench"
    bench.mkdir()
    answers = ["The Eiffel Tower is in Paris.", "The Eiffel Tower is in Rome, built in 1920."]
    write_jsonl(bench / "faithfulness_x.jsonl", [_row(i, "faithfulness", 1 - i % 2, answer=answers[i % 2])
                                            for i in range(6)])
    write_jsonl(bench / "other.jsonl", [_row(0, "answer_relevancy", 1, contexts=())])
    ours = tmp_path / "ours"
    assert calibrate_all.main(["--judge", "fake", "--benchmarks", str(bench), "--only", "faithfulness",
                               "--limit", "4", "--out-dir", str(ours), "--no-progress", "--no-cache"]) == 0

    gguf = tmp_path / "judge.gguf"
    gguf.write_bytes(b"not a model")
    monkeypatch.setattr(ra.harness, "resolve_judge", lambda spec: (gguf, "judge"))
    run, calls = _fake_ragas({"r0": 1.0, "r1": 0.0, "r2": "nan", "r3": 0.4})
    monkeypatch.setattr(ra, "run_ragas", run)
    out = tmp_path / "out"
    argv = ["--judge", "x", "--benchmarks", str(bench), "--only", "faithfulness", "--limit", "4",
            "--out-dir", str(out), "--ours", str(ours)]
    assert ra.main(argv) == 0
    assert calls == [[f"faithfulness_x.jsonl/r{i}" for i in range(4)]]
    assert ra.main(argv) == 0
    assert len(calls) == 1  # every row already scored: no second ragas run

    table = (out / "ragas_vs_localragas.md").read_text()
    auc = next(line for line in table.splitlines() if "| ROC AUC |" in line)
    assert auc.startswith("| faithfulness\\_x.jsonl | faithfulness (ragas Faithfulness") and "| 4 | ROC AUC |" in auc
    assert "1 (nan 1)" in table and "other rows" not in table
    run_ = CalibrationRun.model_validate_json((out / "ragas_agreement.json").read_text())
    [c] = run_.results
    assert [o.id for o in c.per_row] == ["r0", "r1", "r2", "r3"] and c.unscored == 1
    assert run_.meta["variants"] == {"faithfulness_x.jsonl": {"Faithfulness": 4}}
    assert len(run_.meta["row_runs"]) == 4
    written = "".join(p.read_text() for p in out.iterdir())
    assert "Eiffel" not in written and CTX not in written  # ids, labels and scores only, never the rows' text


def test_an_undefined_figure_says_why_below_the_table(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [_row(i, "context_precision", v, kind="graded", answer="")
                                         for i, v in enumerate([0.0, 0.5, 1.0])])
    jobs = ra.plan_file(path, None)
    [c] = ra.ragas_calibrations(str(path), jobs, _records(jobs, [0.5, 0.5, 0.5]), resamples=50)
    table = ra.render_table([(c, None)], ours_given=False)
    assert "- g.jsonl, ragas Spearman: all scores are equal: no ranking" in table
