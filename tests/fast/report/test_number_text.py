"""localragas.core.number_text: the one place numbers become text, each form as the outputs that use it show it."""
from __future__ import annotations

import pytest

from localragas.core.number_text import (count_text, given_text, interval_text, megabytes_text, percent_text,
                                         score_text, score_with_interval, seconds_text, threshold_text)


def test_scores_and_changes():
    assert score_text(0.8125) == "0.812"
    assert score_text(None) == "—"
    assert score_text(None, missing="n/a") == "n/a"
    assert score_text(0.04, signed=True) == "+0.040"
    assert score_text(-0.04, signed=True) == "-0.040"  # an ASCII hyphen-minus, as Python writes it
    assert score_text(0.456, digits=2) == "0.46"


@pytest.mark.parametrize(("form", "signed", "text"), [
    ("dash", False, "0.750–0.870"),  # terminal, HTML, calibrate's terminal table
    ("spaced", False, "0.750 – 0.870"),  # Markdown report
    ("ascii", False, "0.750 - 0.870"),  # JUnit XML
    ("brackets", False, "[0.750, 0.870]"),  # notebook, pytest messages, calibrate's Markdown
    ("ellipsis", True, "+0.750 … +0.870"),  # compare: the interval of a change
])
def test_interval_forms(form, signed, text):
    assert interval_text(0.75, 0.87, form=form, signed=signed) == text


def test_missing_intervals_and_figures():
    assert interval_text(None, 0.8) == "—"
    assert interval_text(0.1, None, missing="") == ""
    assert score_with_interval(0.812, 0.701, 0.903) == "0.812 [0.701, 0.903]"
    assert score_with_interval(0.812, None, None) == "0.812"
    assert score_with_interval(None, 0.1, 0.2) == "—"


def test_thresholds_percentages_durations_sizes_counts():
    assert (threshold_text(0.8), threshold_text(0.805)) == ("0.80", "0.805")
    assert (given_text(0.8), given_text(30.0)) == ("0.8", "30")
    assert percent_text(0.95) == "95%"
    assert percent_text(0.0125, significant=3) == "1.25%"
    assert seconds_text(12.34) == "12.3 s"
    assert seconds_text(12.34, digits=0) == "12 s"
    assert seconds_text(30.0, digits=None) == "30 s"
    assert seconds_text(0.123, digits=2, unit=False) == "0.12"
    assert megabytes_text(1_234_567) == "1.2 MB"
    assert megabytes_text(986_000_000, digits=0) == "986 MB"
    assert [count_text(n, "sample") for n in (0, 1, 2)] == ["0 samples", "1 sample", "2 samples"]
