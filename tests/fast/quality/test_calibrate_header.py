"""`localragas calibrate`'s own output names the calibration in effect (catalogue:NAME, its file, or none), shows the
uncalibrated line eval shows, and with --fit says whether the scores shown are raw or calibrated: the terminal, the
Markdown (--md), the JSON's meta and repr() of a run."""
from __future__ import annotations

import json

import localragas
from localragas.quality.calibration_results import CalibrationRun
from localragas.judges.calibration_map import CalibrationMap, FamilyMap
from localragas.report.calibration import fit_note

from calibration_helpers import overlap_rows
from cli_helpers import cli, write_jsonl

UNCALIBRATED = ("scores of faithfulness are the judge's raw P(yes), not a share a person would count: no calibration "
                "for judge fake")


def calibration_file(tmp_path):
    path = tmp_path / "in-effect.json"
    CalibrationMap({"verify_statement": FamilyMap(1.2, 0.3)}).write(path)
    return path


def run(tmp_path, *extra):
    data = write_jsonl(tmp_path / "lab.jsonl", overlap_rows())
    out, md = tmp_path / "out.json", tmp_path / "out.md"
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--out", out, "--md", md, *extra)
    assert r.exit_code == 0, r.output + str(r.exception)
    markdown = md.read_text().replace("\\", "")  # without cell()'s escapes
    return " ".join(r.output.split()), json.loads(out.read_text()), " ".join(markdown.split())


def test_an_uncalibrated_run_says_so_as_eval_does(tmp_path):
    said, doc, md = run(tmp_path)
    assert said.startswith("judge fake, calibration: none " + UNCALIBRATED)
    assert doc["meta"]["uncalibrated"] == ["faithfulness"] and doc["meta"]["calibration"] is None
    assert doc["results"][0]["calibrated"] is False
    assert "calibration `none`" in md and f"⚠️ {UNCALIBRATED}" in md
    assert "--fit:" not in said and "--fit:" not in md  # no fit asked: nothing to say about it


def test_a_calibration_file_is_named_and_the_uncalibrated_line_left_out(tmp_path):
    path = calibration_file(tmp_path)
    said, doc, md = run(tmp_path, "--judge-option", f"calibration={path}")
    assert said.startswith(f"judge fake, calibration: {path} ")
    assert "uncalibrated" not in said and "uncalibrated" not in md
    assert doc["meta"]["uncalibrated"] == [] and doc["results"][0]["calibrated"] is True
    assert f"calibration `{path}`" in md


def test_fit_says_the_scores_shown_are_raw_or_calibrated(tmp_path):
    said, _, md = run(tmp_path, "--fit", tmp_path / "fitted.json")
    raw = "--fit: the scores shown are the judge's raw P(yes) for faithfulness; the fit reads each item's raw P(yes)"
    assert raw in said and raw in md
    path = calibration_file(tmp_path)
    said, _, md = run(tmp_path, "--fit", tmp_path / "fitted.json", "--judge-option", f"calibration={path}")
    calibrated = f"--fit: the scores shown are calibrated (by {path}) for faithfulness"
    assert calibrated in said and calibrated in md


def test_json_verdicts_are_neither_calibrated_nor_uncalibrated(tmp_path):
    said, doc, md = run(tmp_path, "--metric-option", "faithfulness.verdicts=json")
    assert doc["results"][0]["calibrated"] is None and doc["meta"]["uncalibrated"] == []
    assert "uncalibrated" not in said and "uncalibrated" not in md
    assert fit_note(CalibrationRun.model_validate(doc)) is None  # nothing graded: nothing raw or calibrated to say


def test_repr_of_a_run_names_the_calibration_of_a_map_given_in_python():
    judge = localragas.judges.FakeJudge()
    run = localragas.calibrate(overlap_rows(4), judge, cache=False, progress=False, resume=False,
                               judge_options={"calibration": CalibrationMap({"verify_statement": FamilyMap(1.0, 0.0)})})
    assert repr(run).splitlines()[0] == ("<localragas CalibrationRun: 1 result, judge fake, calibration: a map given "
                                         "in Python>")
    assert "uncalibrated" not in repr(run)
