"""The way-of-asking option of faithfulness and context recall (`question`, judge_calls/support.py QUESTIONS) is
checked: its default is the plain question, a value outside its list is refused naming the metric, the option and the
values (in Python and on the command line, exit code 2), and any other value refuses verdicts=json. A way that was
measured and taken out (metrics/statement_support.py StatementOptions.removed) is refused naming it and where its
measurement is."""
from __future__ import annotations

import re

import pytest

from localragas.judge_calls.support import QUESTIONS, SUPPORTED
from localragas.core.errors import ConfigError
from localragas.metrics import all_metrics
from localragas.metrics.statement_support import StatementOptions

from cli_helpers import cli

WAY_OPTIONS = {"question": QUESTIONS}
REMOVED = StatementOptions.removed

BAD = {"question": "either"}


def test_every_option_has_a_bad_value_here():
    assert set(BAD) == set(WAY_OPTIONS)


@pytest.mark.parametrize("metric", ["faithfulness", "context_recall"])
@pytest.mark.parametrize("option", sorted(WAY_OPTIONS))
def test_the_option_is_checked(metric, option, data):
    values = list(WAY_OPTIONS[option])
    m = all_metrics()[metric]
    assert getattr(m.options, option) == values[0] == SUPPORTED
    listed = ", ".join(map(str, values))
    bad = BAD[option]
    shown = repr(bad) if isinstance(bad, str) else str(bad)
    with pytest.raises(ConfigError, match=re.escape(f"{metric}: {option} must be one of {listed}, got {shown}")) as e:
        m.with_options(**{option: bad})
    assert all(f"{v}: {said[:40]}" in str(e.value) for v, said in WAY_OPTIONS[option].items())  # each value explained
    for value in values[1:]:
        assert getattr(m.with_options(**{option: value}).options, option) == value
        with pytest.raises(ConfigError, match=re.escape(f"{metric}: {option}={value} shapes a graded verdict")):
            m.with_options(**{option: value, "verdicts": "json"})
    r = cli("eval", data, "--judge", "fake", "--metric-option", f"{metric}.{option}={bad}")
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and f"{metric}: {option} must be one of {listed}, got {shown}" in said


@pytest.mark.parametrize("metric", ["faithfulness", "context_recall"])
@pytest.mark.parametrize("option", sorted(REMOVED))
def test_a_removed_way_is_refused_naming_it(metric, option, data):
    value = REMOVED[option]
    m = all_metrics()[metric]
    with pytest.raises(ConfigError) as e:
        m.with_options(**{option: value})
    said = str(e.value)
    assert f"{option}={value} was measured, not adopted and removed from localragas" in said
    assert "docs/accuracy.md" in said
    if option in dict(m.options):  # an option that stays (statements): its valid values are listed
        assert f"{metric}: {option} must be one of claims, sentences, got" in said
    else:  # an option that is gone: the valid options are listed
        assert f"unknown option(s) {option} for metric {metric}; valid: verdicts, statements, question" in said
    r = cli("eval", data, "--judge", "fake", "--metric-option", f"{metric}.{option}={value}")
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and f"{option}={value} was measured, not adopted and removed" in said, r.output
