"""A calibration in a run: applied exactly once to the graded verdicts the metrics use, the raw P(yes) kept beside it
and in the cache, the default thresholds following it, said in the report and on the terminal, and part of the resume
checkpoint's key."""
from __future__ import annotations

import json

import pytest

from localragas import evaluate
from localragas.judges.calibration_map import FamilyMap
from localragas.run.evaluation import checkpoint_key, spec_from_flags
from localragas.judges import FakeJudge
from localragas.run.judging_context import run_judging
from localragas.metrics.context_precision import average_precision
from localragas.core.reply_schemas import Claims, YesNo
from localragas.report import read_json
from localragas.report.html_report import render_html
from localragas.report.markdown import render_markdown
from localragas.data.schema import Sample

from calibration_helpers import calibration_file
from cli_helpers import cli

CLAIMS = {"Paris is in France.": 0.9, "Paris has ten million cats.": 0.2}
SAMPLE = Sample(id="s1", question="Where is Paris?", contexts=["Paris is the capital of France.", "Cats live there."],
                answer="Paris is in France. Paris has ten million cats.", reference="Paris is in France.")
CHUNKS = {"Paris is the capital of France.": 0.6, "Cats live there.": 0.3}


def scripted(prompt, output):
    """Known P(yes): per statement (verify_statement; the answer's sentences, or these claims when asked for; its
    complement when asked whether the contexts contradict it) and per chunk (judge_chunk)."""
    if output is Claims:
        return {"claims": list(CLAIMS)}
    assert output is YesNo
    text = prompt.user
    table = CHUNKS if prompt.name == "judge_chunk" else CLAIMS
    hit = next(k for k in table if (f"<context>\n{k}\n</context>" if prompt.name == "judge_chunk"
                                    else f"<statement>\n{k}\n</statement>") in text)
    return {"p_yes": 1 - table[hit] if prompt.name == "contradict_statement" else table[hit], "mass": 1.0}


def both_families(path):
    return calibration_file(path, a=2.0, b=-1.0, judge_chunk={"a": 0.5, "b": 0.4})


def run(judge, tmp_path, calibration=None, metrics=("faithfulness", "context_precision"), **kw):
    options = {"calibration": calibration} if calibration else None
    return evaluate([SAMPLE], metrics=list(metrics), judge=judge, judge_options=options,
                    cache_dir=tmp_path / "cache", progress=False, **kw)


def test_graded_verdicts_are_calibrated_once_and_keep_the_raw_value(tmp_path):
    claim_map, chunk_map = FamilyMap(2.0, -1.0), FamilyMap(0.5, 0.4)
    judge = FakeJudge(responder=scripted)
    report = run(judge, tmp_path, both_families(tmp_path / "c.json"))
    faith = report.samples[0].metrics["faithfulness"]
    expected = [claim_map(p) for p in CLAIMS.values()]
    assert faith.value == pytest.approx(sum(expected) / 2)
    assert faith.evidence["calibrated"] is True
    assert [(c["p_supported_raw"], c["p_supported"], c["supported"]) for c in faith.evidence["claims"]] == [
        (0.9, round(expected[0], 4), expected[0] >= 0.5), (0.2, round(expected[1], 4), expected[1] >= 0.5)]
    cp = report.samples[0].metrics["context_precision"]
    weights = [chunk_map(p) for p in CHUNKS.values()]
    assert cp.value == pytest.approx(average_precision(weights))
    assert [(c["p_relevant_raw"], c["p_relevant"]) for c in cp.evidence["chunks"]] == [
        (0.6, round(weights[0], 4)), (0.3, round(weights[1], 4))]
    assert cp.evidence["fraction_relevant"] == pytest.approx(sum(weights) / 2)
    asked = [c.prompt.name for c in judge.calls]
    assert sorted(asked) == ["judge_chunk"] * 2 + ["verify_statement"] * 2  # faithfulness: the answer's 2 sentences

    again = FakeJudge(responder=scripted)  # the same cache: every reply is a hit, and is calibrated once too
    second = run(again, tmp_path, both_families(tmp_path / "c.json"))
    assert again.calls == [] and second.meta["judge_stats"]["cache_hits"] == 4
    assert second.samples[0].metrics["faithfulness"].value == pytest.approx(faith.value)
    assert second.samples[0].metrics["context_precision"].value == pytest.approx(cp.value)

    raw = run(FakeJudge(responder=scripted), tmp_path, "none")  # the cache keeps raw P(yes), keyed without the map
    assert raw.meta["judge_stats"]["calls"] == 0
    assert raw.samples[0].metrics["faithfulness"].value == pytest.approx((0.9 + 0.2) / 2)
    assert raw.samples[0].metrics["faithfulness"].evidence["calibrated"] is False


def test_no_contexts_stays_zero_without_a_call_under_a_calibration(tmp_path):
    judge = FakeJudge(responder=scripted)
    report = evaluate([SAMPLE.model_copy(update={"contexts": []})], metrics=["faithfulness"], judge=judge,
                      judge_options={"calibration": both_families(tmp_path / "c.json")}, cache=False, progress=False)
    assert report.samples[0].metrics["faithfulness"].value == 0.0


def test_the_default_thresholds_follow_the_calibration(tmp_path):
    metrics = ("faithfulness", "context_precision", "context_recall", "answer_relevancy")
    kw = {"embedder": "fake", "metrics": metrics}
    calibrated = run(FakeJudge(responder=scripted), tmp_path, both_families(tmp_path / "c.json"), **kw)
    assert calibrated.meta["thresholds"] == {"faithfulness": 0.80, "context_precision": 0.65, "context_recall": 0.70,
                                             "answer_relevancy": 0.75}  # the article's, as verdicts=json's
    assert calibrated.meta["uncalibrated"] == []
    assert calibrated.meta["calibration"]["families"] == {"verify_statement": {"a": 2.0, "b": -1.0},
                                                          "judge_chunk": {"a": 0.5, "b": 0.4}}
    off = run(FakeJudge(responder=scripted), tmp_path, "none", **kw)
    assert off.meta["thresholds"] == {"faithfulness": 0.50, "context_precision": 0.50, "context_recall": 0.50,
                                      "answer_relevancy": 0.75}
    assert off.meta["calibration"] is None
    assert off.meta["uncalibrated"] == ["faithfulness", "context_precision", "context_recall"]
    claims_only = run(FakeJudge(responder=scripted), tmp_path, calibration_file(tmp_path / "v.json"), **kw)
    assert claims_only.meta["thresholds"]["context_precision"] == 0.50  # the map has no judge_chunk family
    assert claims_only.meta["uncalibrated"] == ["context_precision"]
    as_json = run(FakeJudge(), tmp_path, both_families(tmp_path / "c.json"), embedder="fake", metrics=metrics[:3],
                  metric_options={m: {"verdicts": "json"} for m in metrics[:3]})
    assert as_json.meta["thresholds"] == {"faithfulness": 0.80, "context_precision": 0.65, "context_recall": 0.70}
    explicit = run(FakeJudge(responder=scripted), tmp_path, both_families(tmp_path / "c.json"),
                   thresholds={"faithfulness": 0.3}, metrics=("faithfulness",))
    assert explicit.meta["thresholds"] == {"faithfulness": 0.3}


def test_the_terminal_and_the_markdown_say_when_graded_scores_are_uncalibrated(tmp_path, data):
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-progress", "-m", "faithfulness")
    assert ("scores of faithfulness are the judge's raw P(yes), not a share a person would count: no calibration "
            "for judge fake; threshold 0.50 (fit one: localragas calibrate --fit FILE") in " ".join(r.output.split())
    assert "calibrate --fit" in r.output
    cal = calibration_file(tmp_path / "c.json")
    r = cli("eval", data, "--judge", "fake", "--judge-option", f"calibration={cal}", "--embedder", "fake",
            "--no-progress", "-m", "faithfulness", "--out", tmp_path / "r.json")
    assert "uncalibrated" not in r.output and "0.80" in r.output
    meta = json.loads((tmp_path / "r.json").read_text())["meta"]
    assert meta["calibration"]["source"] == cal and meta["uncalibrated"] == []
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-progress",
            "-m", "faithfulness,context_precision",
            "--out", tmp_path / "u.json")
    uncalibrated = read_json(tmp_path / "u.json")
    assert "scores of faithfulness, context\\_precision are the judge's raw P(yes)" in render_markdown(uncalibrated)
    header = render_html(uncalibrated).split("</header>")[0]
    assert ('<p class="facts uncalibrated">⚠ scores of faithfulness, context_precision are the judge&#39;s raw P(yes)'
            in header)


def test_the_config_files_judge_options_choose_the_calibration(tmp_path, data):
    cal = calibration_file(tmp_path / "c.json")
    (tmp_path / "localragas.toml").write_text(f'judge = "fake"\n[judge_options]\ncalibration = "{cal}"\n')
    spec = spec_from_flags(data, config=tmp_path / "localragas.toml")
    assert run_judging(spec.judge, spec.judge_options).calibration.source == cal
    flag = spec_from_flags(data, config=tmp_path / "localragas.toml", judge_option=["calibration=none"])
    assert run_judging(flag.judge, flag.judge_options).calibration is None  # the flag over the file


def test_the_checkpoint_key_holds_the_calibrations_hash_and_the_cache_key_does_not(tmp_path, data):
    spec = spec_from_flags(data, judge="fake")
    plain = run_judging("fake")
    one = run_judging("fake", {"calibration": calibration_file(tmp_path / "a.json", a=2.0)})
    same = run_judging("fake", {"calibration": calibration_file(tmp_path / "b.json", a=2.0)})
    other = run_judging("fake", {"calibration": calibration_file(tmp_path / "c.json", a=3.0)})
    keys = [checkpoint_key(spec, j.scoring_fingerprint) for j in (plain, one, same, other)]
    assert len({keys[0], keys[1], keys[3]}) == 3 and keys[1] == keys[2]
    assert plain.fingerprint == one.fingerprint == other.fingerprint  # what the judge cache is keyed by


def test_shards_of_different_calibrations_are_not_merged_and_compare_names_the_method_change(tmp_path, data):
    cal = calibration_file(tmp_path / "c.json")
    common = ("--judge", "fake", "--embedder", "fake", "--no-progress", "-m", "faithfulness", "--no-gate")
    assert cli("eval", data, *common, "--shard", "1/2", "--judge-option", f"calibration={cal}",
               "--out", tmp_path / "1.json").exit_code == 0
    assert cli("eval", data, *common, "--shard", "2/2", "--out", tmp_path / "2.json").exit_code == 0
    r = cli("merge", tmp_path / "1.json", tmp_path / "2.json")
    assert r.exit_code == 2 and "the shards differ in judge calibration (sha256)" in r.output
    r = cli("compare", tmp_path / "1.json", tmp_path / "2.json")
    assert f"- calibration: {cal} (sha256 " in " ".join(r.output.split())
    assert "in base, none in new (graded scores on another scale)" in " ".join(r.output.split())


def test_a_map_of_the_plain_question_is_not_applied_to_another_way_of_asking(tmp_path):
    """question=both (any way other than the plain support question) gives P(yes) on another scale: its family is
    verify_statement:question=both, which a map fitted on verify_statement does not cover, so its scores stay raw."""
    judge = FakeJudge(responder=scripted)
    report = run(judge, tmp_path, both_families(tmp_path / "c.json"), metrics=("faithfulness",),
                 metric_options={"faithfulness": {"question": "both"}}, gate=False)
    faith = report.samples[0].metrics["faithfulness"]
    assert faith.evidence["calibrated"] is False
    assert [c["p_supported"] for c in faith.evidence["claims"]] == [c["p_supported_raw"]
                                                                   for c in faith.evidence["claims"]]
    assert faith.value == pytest.approx(sum(CLAIMS.values()) / 2)
    assert "faithfulness" in report.meta["uncalibrated"]
