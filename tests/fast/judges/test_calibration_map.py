"""The calibration map (localragas.judges.calibration_map): its shape, its file, its fit; where a judge's calibration
comes from (judges/calibrated.py)."""
from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localragas.judges import catalogue
from localragas.judges.calibration_map import (FORMAT, CalibrationMap, FamilyMap, fit_logistic, load_calibration, logit,
                                               sigmoid)
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge, get_judge
from localragas.judges import calibrated as calibrated_module
from localragas.judges.calibrated import catalogue_calibration, run_calibration
from localragas.run.judging_context import run_judging

from calibration_helpers import calibration_file


# --- the map ----------------------------------------------------------------------------------------------------------

@given(a=st.floats(0.05, 20), b=st.floats(-10, 10), p=st.floats(0, 1), q=st.floats(0, 1))
def test_the_map_is_monotone_and_maps_0_1_into_0_1(a, b, p, q):
    m = FamilyMap(a, b)
    assert 0.0 <= m(p) <= 1.0
    if p < q:
        assert m(p) <= m(q)
    if 0.01 <= p < q <= 0.99 and q - p > 1e-3 and a <= 5 and abs(b) < 5:
        assert m(p) < m(q)  # strictly, where neither the clip nor floating point saturate


def test_the_map_is_the_logistic_of_the_logit_as_written():
    m = FamilyMap(2.0, -1.0)
    assert m(0.7) == pytest.approx(1 / (1 + math.exp(-(2 * math.log(0.7 / 0.3) - 1))))
    assert m(0.0) == pytest.approx(sigmoid(2 * logit(1e-6) - 1)) and m(1.0) < 1.0


def test_families_not_in_the_map_are_not_calibrated():
    cmap = CalibrationMap({"verify_statement": FamilyMap(2.0, 0.0)})
    assert cmap.apply("judge_chunk", [0.3, 0.6]) == [0.3, 0.6]
    assert cmap.apply("verify_statement", [0.5]) == [pytest.approx(0.5)]
    assert cmap.covers("verify_statement") and not cmap.covers("judge_chunk")


def test_the_content_hash_changes_with_the_parameters_only(tmp_path):
    one = load_calibration(calibration_file(tmp_path / "a.json", a=2.0))
    same = load_calibration(calibration_file(tmp_path / "b.json", a=2.0))
    other = load_calibration(calibration_file(tmp_path / "c.json", a=2.5))
    assert one.sha256 == same.sha256 != other.sha256
    assert one.describe() == {"source": str(tmp_path / "a.json"), "sha256": one.sha256,
                              "families": {"verify_statement": {"a": 2.0, "b": -1.0}}}


def test_a_written_map_reads_back(tmp_path):
    cmap = CalibrationMap({"judge_chunk": FamilyMap(1.5, 0.25, {"items": 30})}, {"name": "j"}, "2026-01-01")
    cmap.write(tmp_path / "m.json")
    back = load_calibration(tmp_path / "m.json")
    assert back.families == cmap.families and back.judge == {"name": "j"} and back.source == str(tmp_path / "m.json")


# --- bad files: the file and the field named --------------------------------------------------------------------------

@pytest.mark.parametrize("content, match", [
    ("{not json", r"bad\.json: not valid JSON"),
    ("[1, 2]", r"bad\.json: expected a JSON object"),
    (json.dumps({"format": "other/2", "families": {}}), r"field 'format': expected 'localragas-calibration/1'"),
    (json.dumps({"format": FORMAT}), r"field 'families'"),
    (json.dumps({"format": FORMAT, "families": {"verify_statement": {"b": 0}}}),
     r"field 'families\.verify_statement\.a': missing"),
    (json.dumps({"format": FORMAT, "families": {"verify_statement": {"a": -1, "b": 0}}}),
     r"field 'families\.verify_statement\.a': the slope must be > 0"),
    (json.dumps({"format": FORMAT, "families": {"verify_statement": {"a": 0, "b": 0}}}),
     r"families\.verify_statement\.a': the slope must be > 0"),
    (json.dumps({"format": FORMAT, "families": {"judge_chunk": {"a": 1, "b": "x"}}}),
     r"field 'families\.judge_chunk\.b': expected a finite number, got 'x'"),
    (json.dumps({"format": FORMAT, "families": {"judge_chunk": [1, 2]}}),
     r"families\.judge_chunk': expected an object"),
])
def test_a_bad_file_is_refused_naming_the_file_and_the_field(tmp_path, content, match):
    (tmp_path / "bad.json").write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=match):
        load_calibration(tmp_path / "bad.json")


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"calibration file .*nope\.json not found"):
        get_judge("fake", {"calibration": str(tmp_path / "nope.json")})


# --- the fit ----------------------------------------------------------------------------------------------------------

def synthetic(n: int, a: float, b: float, seed: int) -> tuple[list[float], list[int]]:
    """P(yes) spread over (0, 1) and labels drawn from sigmoid(a * logit(p) + b)."""
    rng = random.Random(seed)
    p = [rng.uniform(0.02, 0.98) for _ in range(n)]
    return p, [int(rng.random() < FamilyMap(a, b)(v)) for v in p]


def test_the_fit_recovers_a_known_map():
    p, y = synthetic(4000, 1.8, 0.6, seed=3)
    a, b = fit_logistic(p, y)
    assert a == pytest.approx(1.8, abs=0.15) and b == pytest.approx(0.6, abs=0.15)


def test_the_fit_matches_scikit_learns_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    p, y = synthetic(800, 0.7, -0.4, seed=11)
    a, b = fit_logistic(p, y, ridge=1e-8)
    ref = LogisticRegression(C=1e8, tol=1e-10, max_iter=1000).fit([[logit(v)] for v in p], y)
    assert a == pytest.approx(ref.coef_[0][0], abs=1e-3) and b == pytest.approx(ref.intercept_[0], abs=1e-3)


# --- where a calibration comes from -----------------------------------------------------------------------------------

def test_the_fake_judge_is_uncalibrated_unless_a_file_is_given(tmp_path):
    assert run_judging("fake").calibration is None
    judging = run_judging("fake", {"calibration": calibration_file(tmp_path / "c.json")})  # not a backend setting
    assert judging.calibration.families["verify_statement"] == FamilyMap(2.0, -1.0, judging.calibration.families[
        "verify_statement"].fitted_on)
    assert not hasattr(judging.judge, "calibration")  # the run's, not the judge's
    assert run_judging("fake", {"calibration": "none"}).calibration is None
    with pytest.raises(ConfigError, match="the fake judge takes no --judge-option"):
        get_judge("fake", {"calibration": "none", "n_ctx": 5})


def test_a_judge_instance_takes_only_the_calibration_option(tmp_path):
    judge = FakeJudge()
    assert run_calibration(judge, {"calibration": calibration_file(tmp_path / "c.json")}) is not None
    assert run_calibration(judge, {}) is None  # no choice: the catalogue's, none for a fake judge
    assert run_calibration(judge, {"calibration": "none"}) is None
    with pytest.raises(ConfigError, match="judge options n_ctx are for building a judge"):
        run_calibration(judge, {"n_ctx": 4096})


def test_the_catalogue_calibration_applies_only_to_the_catalogue_entrys_file(tmp_path, monkeypatch):
    shipped = tmp_path / "calibrations"
    shipped.mkdir()
    calibration_file(shipped / "qwen.json", a=1.3, b=0.2)
    entry = catalogue.CATALOGUE[catalogue.DEFAULT_JUDGE]
    shipping = catalogue.ModelSpec(**{**entry.__dict__, "calibration": "qwen.json"})
    monkeypatch.setitem(catalogue.CATALOGUE, entry.name, shipping)
    monkeypatch.setattr(calibrated_module, "SHIPPED", shipped)
    judge = FakeJudge()
    judge.sha256 = entry.sha256  # e.g. a .gguf path holding the catalogue's file
    got = catalogue_calibration(judge)
    assert got is not None and got.source == f"catalogue:{entry.name}" and got.families["verify_statement"].a == 1.3
    judge.sha256 = "0" * 64  # an arbitrary GGUF
    assert catalogue_calibration(judge) is None
    assert catalogue_calibration(FakeJudge()) is None


def test_no_catalogue_judge_ships_a_calibration_on_this_branch_unless_its_file_is_there():
    for m in catalogue.CATALOGUE.values():
        if m.calibration:
            assert (calibrated_module.SHIPPED / m.calibration).is_file(), m.name
