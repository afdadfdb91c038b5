"""Context precision's `questions` option: `both` asks each chunk the chunk question (judge_chunk) and the
answerability question (question_answerable), scores the mean of their P(yes), keeps both in the evidence, and is
calibrated by a map of its own family only."""
from __future__ import annotations

import json

import pytest

from localragas import evaluate
from localragas.judges.calibration_map import FamilyMap
from localragas.core.errors import ConfigError
from localragas.core.reply_schemas import YesNo
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.data.schema import Sample

from calibration_helpers import calibration_file

CHUNKS = ["The Eiffel Tower was completed in 1889.", "Paris has many bakeries."]
SAMPLE = Sample(id="s1", question="When was the Eiffel Tower completed?", contexts=CHUNKS, answer="")
USEFUL = {CHUNKS[0]: 0.8, CHUNKS[1]: 0.3}
ANSWERS = {CHUNKS[0]: 0.6, CHUNKS[1]: 0.1}
METRIC = all_metrics()["context_precision"]


def scripted(prompt, output):
    assert output is YesNo
    table = {"judge_chunk": USEFUL, "question_answerable": ANSWERS}[prompt.name]
    hit = [k for k in table if k in prompt.user]
    assert len(hit) == 1, prompt.user  # one chunk a call, shown alone
    return {"p_yes": table[hit[0]], "mass": 1.0}


def run(judge, tmp_path, questions="both", calibration=None):
    options = {"calibration": calibration} if calibration else None
    return evaluate([SAMPLE], metrics=["context_precision"], judge=judge, judge_options=options,
                    metric_options={"context_precision": {"questions": questions}}, cache=False, progress=False,
                    gate=False)


def test_both_asks_each_chunk_two_questions_and_scores_their_mean(tmp_path):
    judge = FakeJudge(responder=scripted)
    report = run(judge, tmp_path)
    asked = [c.prompt for c in judge.calls]
    assert sorted(p.name for p in asked) == ["judge_chunk"] * 2 + ["question_answerable"] * 2
    assert all(SAMPLE.question in p.user for p in asked)
    cp = report.samples[0].metrics["context_precision"]
    means = [(USEFUL[c] + ANSWERS[c]) / 2 for c in CHUNKS]  # 0.7, 0.2
    assert [c["p_relevant"] for c in cp.evidence["chunks"]] == pytest.approx(means)
    assert [c["p_useful_raw"] for c in cp.evidence["chunks"]] == [USEFUL[c] for c in CHUNKS]
    assert [c["p_answerable_raw"] for c in cp.evidence["chunks"]] == [ANSWERS[c] for c in CHUNKS]
    # average precision with graded relevance: (0.7 * 0.7/1 + 0.2 * 0.9/2) / 0.9
    assert cp.value == pytest.approx((0.7 * 0.7 + 0.2 * 0.45) / 0.9)
    assert cp.evidence["calibrated"] is False
    assert report.meta["uncalibrated"] == ["context_precision"]


def test_the_default_asks_the_chunk_question_only():
    judge = FakeJudge(responder=scripted)
    report = evaluate([SAMPLE], metrics=["context_precision"], judge=judge, cache=False, progress=False, gate=False)
    assert [c.prompt.name for c in judge.calls] == ["judge_chunk", "judge_chunk"]
    chunks = report.samples[0].metrics["context_precision"].evidence["chunks"]
    assert [c["p_relevant"] for c in chunks] == [USEFUL[c] for c in CHUNKS]
    assert "p_answerable_raw" not in chunks[0]


def test_both_is_calibrated_by_a_map_of_its_own_family_only(tmp_path):
    """A map of judge_chunk (the one question's scale) is not applied to the mean of two; a map of
    judge_chunk:questions=both is, once, to the raw mean."""
    chunk_only = calibration_file(tmp_path / "chunk.json", a=2.0, b=-1.0, judge_chunk={"a": 0.5, "b": 0.4})
    report = run(FakeJudge(responder=scripted), tmp_path, calibration=chunk_only)
    assert report.samples[0].metrics["context_precision"].evidence["calibrated"] is False

    path = tmp_path / "both.json"
    data = json.loads((tmp_path / "chunk.json").read_text())
    data["families"]["judge_chunk:questions=both"] = {**data["families"]["judge_chunk"], "a": 1.5, "b": 0.2}
    path.write_text(json.dumps(data))
    report = run(FakeJudge(responder=scripted), tmp_path, calibration=str(path))
    cp = report.samples[0].metrics["context_precision"]
    assert cp.evidence["calibrated"] is True
    m = FamilyMap(1.5, 0.2)
    assert [c["p_relevant"] for c in cp.evidence["chunks"]] == pytest.approx(
        [round(m((USEFUL[c] + ANSWERS[c]) / 2), 4) for c in CHUNKS], abs=1e-4)
    assert [c["p_relevant_raw"] for c in cp.evidence["chunks"]] == pytest.approx([0.7, 0.2])


def test_the_option_is_checked():
    assert METRIC.with_options(questions="both").prompts == ("judge_chunk", "question_answerable")
    assert METRIC.with_options(questions="both").graded_family == "judge_chunk:questions=both"
    assert METRIC.graded_family == "judge_chunk" and METRIC.prompts == ("judge_chunk",)
    with pytest.raises(ConfigError, match="questions must be one of useful, both"):
        METRIC.with_options(questions="three")
    with pytest.raises(ConfigError, match="questions=both .* does not apply to verdicts=json"):
        METRIC.with_options(questions="both", verdicts="json")


def test_a_chunk_too_long_for_the_window_is_asked_both_questions_in_pieces():
    long_chunk = " ".join(["The Eiffel Tower was completed in 1889."] + ["Paris has many bakeries."] * 400)
    sample = SAMPLE.model_copy(update={"contexts": [long_chunk]})

    def by_piece(prompt, output):
        return {"p_yes": 0.9 if "1889" in prompt.user else 0.1, "mass": 1.0}

    judge = FakeJudge(responder=by_piece)
    judge.n_ctx = 1024
    report = evaluate([sample], metrics=["context_precision"], judge=judge, cache=False, progress=False, gate=False,
                      metric_options={"context_precision": {"questions": "both"}})
    names = [c.prompt.name for c in judge.calls]
    assert names.count("judge_chunk") > 1 and names.count("question_answerable") == names.count("judge_chunk")
    cp = report.samples[0].metrics["context_precision"]
    assert cp.evidence["chunks"][0]["p_relevant"] == pytest.approx(0.9)  # the highest over the pieces, each question
    assert any("judged in pieces" in w for w in cp.evidence["warnings"])
