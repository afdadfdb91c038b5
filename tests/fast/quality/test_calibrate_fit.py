"""`localragas calibrate --fit FILE`: a calibration map fitted end to end with the fake judge on generated labelled rows
(one claim each), from the raw P(yes) whatever calibration is in effect; refused with the counts when it cannot be."""
from __future__ import annotations

import json
import random

import pytest

from localragas.judges.calibration_map import FORMAT, FamilyMap, fit_logistic, load_calibration

from calibration_helpers import overlap_row
from cli_helpers import cli, write_jsonl

TRUE_A, TRUE_B = 1.5, 2.0


def labelled(path, n: int, seed: int = 5, label=None):
    """n rows, labels drawn from sigmoid(TRUE_A * logit(p) + TRUE_B) with a seed (or label(p) when given)."""
    rng = random.Random(seed)
    truth = FamilyMap(TRUE_A, TRUE_B)
    rows = []
    for i in range(n):
        shared = rng.randint(1, 5)
        p = 0.8 * shared / 10
        rows.append(overlap_row(i, shared, label(p) if label else int(rng.random() < truth(p))))
    return write_jsonl(path, rows)


def fit(tmp_path, data, *extra):
    out, fitted = tmp_path / "calib.json", tmp_path / "fitted.json"
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--out", out, "--fit", fitted, *extra)
    return r, out, fitted


def test_fit_recovers_a_known_map_end_to_end(tmp_path):
    data = labelled(tmp_path / "lab.jsonl", 800)
    r, out, fitted = fit(tmp_path, data)
    assert r.exit_code == 0, r.output
    doc = json.loads(fitted.read_text())
    assert doc["format"] == FORMAT and doc["judge"] == {"name": "fake", "fingerprint": "fake:fake"}
    fam = doc["families"]["verify_statement"]
    assert fam["a"] == pytest.approx(TRUE_A, abs=0.4) and fam["b"] == pytest.approx(TRUE_B, abs=0.5)
    rows = json.loads(out.read_text())["results"][0]["per_row"]
    items = [x["items"] for x in rows]
    assert all(len(i) == 1 and set(i[0]) == {"claim", "supported", "p_supported", "p_supported_raw"} for i in items)
    raw, labels = [i[0]["p_supported_raw"] for i in items], [int(x["label"]) for x in rows]
    assert (fam["a"], fam["b"]) == pytest.approx(fit_logistic(raw, labels))  # the items' raw P(yes), by hand
    assert fam["fitted_on"]["items"] == 800 and fam["fitted_on"]["positives"] == sum(labels)
    said = " ".join(r.output.split())
    assert f"fitted verify_statement (faithfulness): a={fam['a']:.4f} b={fam['b']:.4f} on 800 items" in said
    assert "Brier" in said and "raw ->" in said and "share supported" in said
    assert load_calibration(fitted).covers("verify_statement")  # usable as --judge-option calibration=FILE


def test_fit_reads_the_raw_p_yes_not_the_calibration_in_effect(tmp_path):
    data = labelled(tmp_path / "lab.jsonl", 200)
    r, _, first = fit(tmp_path, data)
    assert r.exit_code == 0, r.output
    (tmp_path / "in-effect.json").write_text(first.read_text())
    r, out, again = fit(tmp_path, data, "--judge-option", f"calibration={tmp_path / 'in-effect.json'}")
    assert r.exit_code == 0, r.output
    item = json.loads(out.read_text())["results"][0]["per_row"][0]["items"][0]
    assert item["p_supported"] != item["p_supported_raw"]  # the run was calibrated...
    fam = json.loads(first.read_text())["families"]["verify_statement"]
    refit = json.loads(again.read_text())["families"]["verify_statement"]
    assert (refit["a"], refit["b"]) == pytest.approx((fam["a"], fam["b"]))  # ...the fit was not


def test_fit_refuses_too_few_items_of_a_class_naming_the_counts(tmp_path):
    rows = [overlap_row(i, 1 + i % 5, int(i < 4)) for i in range(30)]
    two_claims = "Alpha bravo charlie. Delta echo foxtrot."
    rows += [overlap_row(30 + i, 3, 1, answer=two_claims) for i in range(6)]
    r, _, fitted = fit(tmp_path, write_jsonl(tmp_path / "few.jsonl", rows))
    assert r.exit_code == 2 and not fitted.exists()
    said = " ".join(r.output.split())
    assert "verify_statement (faithfulness): 30 single-item rows of 36 (4 labelled 1, 26 labelled 0)" in said
    assert "at least 10 of each" in said


def test_fit_refuses_a_judge_that_ranks_backwards(tmp_path):
    r, _, fitted = fit(tmp_path, labelled(tmp_path / "back.jsonl", 120, label=lambda p: int(p < 0.2)))
    assert r.exit_code == 2 and not fitted.exists()
    assert "the judge ranks these items backwards" in " ".join(r.output.split())


def test_fit_needs_a_graded_metric(tmp_path):
    data = labelled(tmp_path / "lab.jsonl", 30)
    r, _, fitted = fit(tmp_path, data, "--metric-option", "faithfulness.verdicts=json")
    assert r.exit_code == 2 and not fitted.exists()
    assert "no binary-labelled rows of a metric with graded verdicts" in " ".join(r.output.split())
