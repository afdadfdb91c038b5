"""A threshold and the max error rate are checked by one rule (a number in [0, 1]); each error names what was bad."""
from __future__ import annotations

import pytest

from localragas.core.errors import ConfigError
from localragas.run.gate import check_max_error_rate, check_threshold


@pytest.mark.parametrize("check, value, message", [
    (lambda v: check_threshold("faithfulness", v), "high", "threshold for faithfulness must be a number in [0, 1], "
                                                           "got 'high'"),
    (lambda v: check_threshold("faithfulness", v), 1.5, "threshold for faithfulness must be in [0, 1], got 1.5"),
    (check_max_error_rate, None, "max error rate must be a number in [0, 1], got None"),
    (check_max_error_rate, "-0.1", "max error rate must be in [0, 1], got -0.1"),
])
def test_a_bad_share_is_refused_naming_what_it_is(check, value, message):
    with pytest.raises(ConfigError) as e:
        check(value)
    assert str(e.value) == message


def test_a_share_in_range_is_its_number():
    assert check_threshold("context_recall", "0.7") == 0.7 and check_max_error_rate(0) == 0.0
    assert check_max_error_rate("1") == 1.0
