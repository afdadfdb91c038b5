"""The default judge with its catalogue calibration (docs/calibration.md): an obvious supported claim and an obvious
unsupported one land on the right side of 0.5 once calibrated."""
from __future__ import annotations

import pytest

from localragas.judges import catalogue
from localragas.judge_calls.verdicts import SUPPORT_FAMILY, VERDICTS
from localragas.run.judging_context import run_judging
from localragas.judge_calls.sample_context import Scoring

from real_helpers import CONTEXT, FAITHFUL

STATED = "The Eiffel Tower is in Paris."
UNSUPPORTED = "The Eiffel Tower was completed in 1925."


def test_calibrated_obvious_claims_land_on_the_right_side_of_one_half(qwen_judge):
    judging = run_judging(qwen_judge)  # no calibration option: the catalogue's
    cal = judging.calibration
    if cal is None or not cal.covers(SUPPORT_FAMILY):
        pytest.skip(f"the catalogue ships no calibration for {catalogue.DEFAULT_JUDGE}'s {SUPPORT_FAMILY} yet "
                    "(ModelSpec.calibration in localragas/judges/catalogue.py)")
    assert cal.source == f"catalogue:{catalogue.DEFAULT_JUDGE}"
    got = VERDICTS["probability"].support(Scoring(FAITHFUL, judging), [STATED, UNSUPPORTED], CONTEXT)
    assert got.calibrated and got.values[0] > 0.5 > got.values[1], (got.values, got.raw)
