"""How a number is written for people, one way everywhere: scores and means, their intervals, paired changes,
thresholds, percentages, durations, sizes and counts, in the terminal, every report format, the gate's messages, the
pytest helpers and the CLI. Where two outputs write the same figure differently (an interval as 0.750–0.870 in the
terminal table, [0.750, 0.870] in a notebook), the difference is a named parameter here, not a second copy."""
from __future__ import annotations

from typing import Literal

NONE = "—"  # a figure that has no value (no scored sample, no interval)

# How an interval's two ends are joined, by where it is shown.
IntervalForm = Literal["dash", "spaced", "ascii", "brackets", "ellipsis"]
_FORMS: dict[str, str] = {
    "dash": "{}–{}",  # 0.750–0.870: the terminal and HTML reports, calibrate's terminal table
    "spaced": "{} – {}",  # 0.750 – 0.870: the Markdown report
    "ascii": "{} - {}",  # 0.750 - 0.870: JUnit XML (read in plain-text CI logs)
    "brackets": "[{}, {}]",  # [0.750, 0.870]: notebooks, pytest messages, calibrate's Markdown and repr
    "ellipsis": "{} … {}",  # +0.010 … +0.030: the interval of a change (compare)
}


def score_text(x: float | None, *, digits: int = 3, signed: bool = False, missing: str = NONE) -> str:
    """0.8125 -> '0.812'; signed (a change): '+0.040', '-0.040'; None -> missing ('—')."""
    if x is None:
        return missing
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def interval_text(low: float | None, high: float | None, *, form: IntervalForm = "dash", signed: bool = False,
                  missing: str = NONE) -> str:
    """An interval's ends as scores joined the way `form` names ('0.750–0.870', '[0.750, 0.870]', ...); missing
    when either end is None."""
    if low is None or high is None:
        return missing
    return _FORMS[form].format(score_text(low, signed=signed), score_text(high, signed=signed))


def score_with_interval(value: float | None, low: float | None, high: float | None, *, missing: str = NONE) -> str:
    """A figure with its interval when it has one: '0.812 [0.701, 0.903]', '0.812'; missing when it has no value."""
    if value is None:
        return missing
    if low is None or high is None:
        return score_text(value)
    return f"{score_text(value)} {interval_text(low, high, form='brackets')}"


def threshold_text(t: float) -> str:
    """0.8 -> '0.80', 0.805 -> '0.805': two decimals unless the threshold has more."""
    return f"{t:.2f}" if round(t, 2) == t else f"{t:g}"


def given_text(x: float) -> str:
    """A number as short as it can be written, as a user would give it: 0.8 -> '0.8', 30.0 -> '30'."""
    return f"{x:g}"


def percent_text(share: float, *, significant: int | None = None) -> str:
    """A share as a percentage: 0.95 -> '95%'; with significant digits: 0.0125 -> '1.25%' (3), as the gate's
    error-rate messages write it."""
    return f"{share:.0%}" if significant is None else f"{share * 100:.{significant}g}%"


def seconds_text(s: float, *, digits: int | None = 1, unit: bool = True) -> str:
    """A duration: 12.34 -> '12.3 s'; digits=None writes it as given ('30 s'); unit=False leaves out ' s'."""
    text = given_text(s) if digits is None else f"{s:.{digits}f}"
    return f"{text} s" if unit else text


def megabytes_text(n_bytes: float, *, digits: int = 1) -> str:
    """A size in bytes as megabytes (10^6): 1_234_567 -> '1.2 MB'."""
    return f"{n_bytes / 1e6:.{digits}f} MB"


def count_text(n: int, noun: str) -> str:
    """1 -> '1 sample', 3 -> '3 samples' (a noun made plural with an s)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
