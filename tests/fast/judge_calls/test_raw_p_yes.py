"""An item's raw P(yes) is read back by the function beside the code that writes it (judge_calls/verdicts.py), whatever
the item's flag: what research/accuracy/calibration_quality.py, research/accuracy/claim_aggregation.py and `calibrate --fit` read."""
from __future__ import annotations

import pytest

from localragas.judge_calls.verdicts import ItemVerdicts, raw_key, raw_p_yes


@pytest.mark.parametrize("flag", ["supported", "attributed", "relevant"])
def test_the_raw_p_yes_written_for_an_item_is_read_back(flag):
    item = ItemVerdicts([0.9, 0.2], raw=[0.61234, 0.1], calibrated=True).item(0, flag)
    assert item == {flag: True, f"p_{flag}": 0.9, f"p_{flag}_raw": 0.6123} and raw_key(flag) == f"p_{flag}_raw"
    assert raw_p_yes({"claim": "Paris is in France.", **item}) == 0.6123


def test_an_item_of_json_verdicts_has_no_raw_p_yes():
    item = ItemVerdicts([1.0]).item(0, "supported")
    assert item == {"supported": True} and raw_p_yes({"claim": "x", **item}) is None
