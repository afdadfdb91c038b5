"""A calibration records the prompt templates it was fitted under (calibrate --fit writes each family's
prompt_sha256), and a run whose prompt for a calibrated family differs does not apply that family's map: its scores
are raw P(yes), its thresholds the uncalibrated 0.50, and the uncalibrated line says why. Files without the hashes
keep working as before."""
from __future__ import annotations

import hashlib
import json

import pytest

import localragas
from localragas import Criterion
from localragas.judges.calibration_map import CalibrationMap, FamilyMap, load_calibration, uncalibrated_note
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.prompts.overrides import template_hashes

from calibration_helpers import overlap_rows
from cli_helpers import cli, write_jsonl

MINE = "Say yes only when a context states the statement word for word."
BUILT_IN = template_hashes(["verify_statement"])["verify_statement"]
ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue.",
         "contexts": ["The sky at night is dark."], "reference": "The sky is blue."}]  # P(yes) 0.4: mapped visibly
WHY = "prompt for verify_statement overridden since the calibration was fitted"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def calibration(tmp_path, hashes: dict[str, str] | None = None, family: str = "verify_statement"):
    path = tmp_path / "cal.json"
    CalibrationMap({family: FamilyMap(1.5, 1.0, {}, hashes or {})}).write(path)
    return path


def run(judge_options, prompts=None, metrics=("faithfulness",), judge=None):
    return localragas.evaluate(ROWS, metrics=list(metrics), judge=judge or "fake", cache=False, progress=False,
                               judge_options=judge_options, prompts=prompts)


def test_fit_records_the_template_hash_of_each_family_it_was_fitted_under(tmp_path):
    data = write_jsonl(tmp_path / "lab.jsonl", overlap_rows())
    mine = tmp_path / "mine.txt"
    mine.write_text(MINE)
    for extra, expected in (((), BUILT_IN), (("--prompt", f"verify_statement={mine}"), sha(MINE))):
        fitted = tmp_path / "fitted.json"
        r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", fitted, *extra)
        assert r.exit_code == 0, r.output
        family = json.loads(fitted.read_text())["families"]["verify_statement"]
        assert family["prompt_sha256"] == {"verify_statement": expected}
        assert load_calibration(fitted).families["verify_statement"].prompt_sha256 == {"verify_statement": expected}
    report = run({"calibration": str(fitted)}, {"verify_statement": mine})  # the run asks what the fit was asked
    assert report.meta["prompts"]["sha256"]["verify_statement"] == sha(MINE)
    assert report.meta["uncalibrated"] == [] and "not_applied" not in report.meta["calibration"]


def test_a_calibration_fitted_under_the_built_in_text_is_not_applied_under_an_override(tmp_path):
    path = calibration(tmp_path, {"verify_statement": BUILT_IN})
    mine = tmp_path / "mine.txt"
    mine.write_text(MINE)
    applied = run({"calibration": str(path)})
    item = applied.samples[0].metrics["faithfulness"].evidence["claims"][0]
    assert item["p_supported"] != item["p_supported_raw"] and applied.meta["thresholds"] == {"faithfulness": 0.8}

    judge = FakeJudge()
    overridden = run({"calibration": str(path)}, {"verify_statement": mine}, judge=judge)
    assert MINE in judge.asked("verify_statement")[0].user
    result = overridden.samples[0].metrics["faithfulness"]
    item = result.evidence["claims"][0]
    assert item["p_supported"] == item["p_supported_raw"] and result.evidence["calibrated"] is False
    meta = overridden.meta
    assert meta["calibration"]["families"] == {} and meta["calibration"]["not_applied"] == {"verify_statement": WHY}
    assert meta["uncalibrated"] == ["faithfulness"] and meta["thresholds"] == {"faithfulness": 0.5}
    assert uncalibrated_note(meta).startswith("scores of faithfulness are the judge's raw P(yes), not a share a person "
                                              f"would count: the calibration of judge fake is not applied ({WHY})")


def test_the_terminal_line_says_why_and_another_familys_override_changes_nothing(tmp_path):
    path = calibration(tmp_path, {"verify_statement": BUILT_IN})
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    mine = tmp_path / "mine.txt"
    mine.write_text(MINE)
    r = cli("eval", data, "--judge", "fake", "-m", "faithfulness", "--no-cache", "--no-progress", "--no-gate",
            "--judge-option", f"calibration={path}", "--prompt", f"verify_statement={mine}")
    assert f"the calibration of judge fake is not applied ({WHY})" in " ".join(r.output.split()), r.output
    claims = run({"calibration": str(path)}, {"extract_claims": mine})  # not what the map's P(yes) are asked with
    assert claims.meta["uncalibrated"] == [] and claims.meta["thresholds"] == {"faithfulness": 0.8}


def test_a_calibration_fitted_under_an_override_is_not_applied_to_the_built_in_text(tmp_path):
    path = calibration(tmp_path, {"verify_statement": sha(MINE)})
    report = run({"calibration": str(path)})
    assert report.meta["calibration"]["not_applied"] == {
        "verify_statement": "prompt for verify_statement changed since the calibration was fitted"}
    assert report.meta["uncalibrated"] == ["faithfulness"]


def test_an_old_file_without_hashes_is_applied_under_any_prompt(tmp_path):
    path = calibration(tmp_path)
    assert "prompt_sha256" not in json.loads(path.read_text())["families"]["verify_statement"]
    mine = tmp_path / "mine.txt"
    mine.write_text(MINE)
    report = run({"calibration": str(path)}, {"verify_statement": mine})
    assert report.meta["uncalibrated"] == [] and report.meta["thresholds"] == {"faithfulness": 0.8}
    assert "not_applied" not in report.meta["calibration"]


def test_a_criterion_whose_question_changed_since_the_fit_is_uncalibrated(tmp_path, own_metrics):
    before = Criterion(name="on_topic_hash", question="Does the answer reply to the question?")
    path = calibration(tmp_path, before.prompt_hashes(None), family="criterion:on_topic_hash")
    assert run({"calibration": str(path)}, metrics=[before]).meta["uncalibrated"] == []
    after = Criterion(name="on_topic_hash", question="Does the answer reply to the question, and politely?")
    meta = run({"calibration": str(path)}, metrics=[after]).meta
    assert meta["uncalibrated"] == ["on_topic_hash"]
    assert meta["calibration"]["not_applied"] == {
        "criterion:on_topic_hash": "prompt for criterion:on_topic_hash changed since the calibration was fitted"}


def test_calibrate_shows_why_a_family_is_not_applied(tmp_path):
    path = calibration(tmp_path, {"verify_statement": BUILT_IN})
    mine = tmp_path / "mine.txt"
    mine.write_text(MINE)
    got = localragas.calibrate(overlap_rows(4), "fake", cache=False, progress=False, resume=False,
                               judge_options={"calibration": str(path)}, prompts={"verify_statement": mine})
    assert got.meta["calibration"]["not_applied"] == {"verify_statement": WHY}
    assert got.meta["uncalibrated"] == ["faithfulness"] and got.results[0].calibrated is False
    assert f"the calibration of judge fake is not applied ({WHY})" in repr(got)


@pytest.mark.parametrize("value", ["abc", {"verify_statement": "short"}, {"verify_statement": 3}])
def test_a_bad_prompt_hash_names_the_field(tmp_path, value):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "localragas-calibration/1",
                                "families": {"verify_statement": {"a": 1.0, "b": 0.0, "prompt_sha256": value}}}))
    with pytest.raises(ConfigError, match=r"field 'families.verify_statement.prompt_sha256': expected an object of "
                                          r"prompt family -> sha256"):
        load_calibration(path)

