"""A calibration of a way of asking holds only under the texts that way adds to the support prompt outside the prompt
families' templates (asking.ways.Way.texts): the content-free statements of baseline=content_free (NULL_STATEMENTS)
and the note of lead=preceding (LEAD_NOTE). Their hashes are recorded beside the templates' only when the way uses
them, so the plain question's, which the shipped calibration was fitted under, are unchanged."""
from __future__ import annotations

import json

import pytest

import localragas
from localragas import models
from localragas.asking.ways import WAY_OPTIONS
from localragas.calibration_map import CalibrationMap, FamilyMap, load_calibration
from localragas.judges.calibrated import SHIPPED
from localragas.metrics import all_metrics
from localragas.prompts.overrides import template_hashes
from localragas.prompts.verdicts import LEAD_NOTE, NULL_STATEMENTS

from calibration_helpers import overlap_rows
from cli_helpers import cli, write_jsonl

FAITH = all_metrics()["faithfulness"]
ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue.",
         "contexts": ["The sky at night is dark."], "reference": "The sky is blue."}]
# the key of each text -> the way that adds it, the text, and another value of its English entry
WAYS = {"null_statements": ({"baseline": "content_free"}, NULL_STATEMENTS, ("Nothing.", "So it is.")),
        "lead_note": ({"lead": "preceding"}, LEAD_NOTE, "The statement is part of a longer text. Judge it alone.")}


def fitted(tmp_path, options: dict) -> tuple[str, str]:
    """A calibration file of faithfulness's family under `options`, fitted (synthetically) under the prompts it asks
    now, as calibrate --fit records them; and the family."""
    metric = FAITH.with_options(**options)
    path = tmp_path / "cal.json"
    CalibrationMap({metric.graded_family: FamilyMap(1.5, 1.0, {}, metric.prompt_hashes(None))}).write(path)
    return str(path), metric.graded_family


def run(path: str | None, options: dict) -> dict:
    """The meta of a faithfulness run of the fake judge with the calibration file at `path` (None: uncalibrated)."""
    return localragas.evaluate(ROWS, metrics=["faithfulness"], judge="fake", cache=False, progress=False, gate=False,
                               judge_options={"calibration": path} if path else None,
                               metric_options={"faithfulness": options}).meta


@pytest.mark.parametrize("key", WAYS)
def test_a_map_of_the_way_is_not_applied_after_its_text_changed(tmp_path, monkeypatch, key):
    options, text, other = WAYS[key]
    path, family = fitted(tmp_path, options)
    assert set(load_calibration(path).families[family].prompt_sha256) == {"verify_statement", key}
    assert run(path, options)["uncalibrated"] == []
    monkeypatch.setitem(text, "en", other)
    meta = run(path, options)
    assert meta["uncalibrated"] == ["faithfulness"] and meta["thresholds"] == {"faithfulness": 0.5}
    assert meta["calibration"]["not_applied"] == {family: f"prompt for {key} changed since the calibration was fitted"}


@pytest.mark.parametrize("key", WAYS)
def test_a_text_the_way_does_not_add_changes_nothing(tmp_path, monkeypatch, key):
    options = WAYS[key][0]
    path, _ = fitted(tmp_path, options)
    for _, text, other in (v for k, v in WAYS.items() if k != key):
        monkeypatch.setitem(text, "en", other)
    assert run(path, options)["uncalibrated"] == []


@pytest.mark.parametrize("option, value", [(k, v) for k, values in WAY_OPTIONS.items() for v in values])
def test_a_text_is_hashed_only_for_the_way_that_adds_it(option, value):
    metric = FAITH.with_options(**{option: value})
    added = set(metric.prompt_hashes(None)) - set(template_hashes(list(metric.graded_prompts)))
    assert added == {k for k, (options, _, _) in WAYS.items() if options == {option: value}}


def graded_hashes() -> dict[str, dict[str, str]]:
    """calibration family -> prompt hashes of each built-in metric graded by default (the plain question's)."""
    return {m.graded_family: m.prompt_hashes(None) for m in all_metrics().values() if getattr(m, "graded", False)}


def test_the_plain_questions_hashes_are_unchanged_and_the_shipped_map_applies(monkeypatch):
    plain = graded_hashes()
    assert plain == {"verify_statement": template_hashes(["verify_statement"]),
                     "judge_chunk": template_hashes(["judge_chunk"])}
    shipped = load_calibration(SHIPPED / models.spec(models.DEFAULT_JUDGE).calibration)
    assert {f: shipped.families[f].prompt_sha256 for f in plain} == plain
    assert shipped.for_prompts(plain).not_applied == {}
    for _, text, other in WAYS.values():
        monkeypatch.setitem(text, "en", other)
    assert graded_hashes() == plain


def test_calibrate_fit_records_the_texts_of_the_way(tmp_path):
    data = write_jsonl(tmp_path / "lab.jsonl", overlap_rows())
    path = tmp_path / "fitted.json"
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", path,
            "--metric-option", "faithfulness.baseline=content_free", "--metric-option", "faithfulness.lead=preceding")
    assert r.exit_code == 0, r.output
    family = FAITH.with_options(baseline="content_free", lead="preceding")
    recorded = json.loads(path.read_text())["families"][family.graded_family]["prompt_sha256"]
    assert set(recorded) == {"verify_statement", "null_statements", "lead_note"}
    assert recorded == family.prompt_hashes(None)


def test_the_report_shows_every_hash_a_calibration_of_the_way_records():
    options = {"baseline": "content_free", "lead": "preceding", "shots": 3}
    recorded = FAITH.with_options(**options).prompt_hashes(None)
    assert set(recorded) == {"verify_statement", "support_examples", "null_statements", "lead_note"}
    shown = run(None, options)["prompts"]["sha256"]
    assert {k: shown[k] for k in recorded} == recorded and list(shown) == sorted(shown)
    assert run(None, {})["prompts"]["sha256"] == template_hashes(["verify_statement"])
