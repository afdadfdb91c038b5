"""The quality gate: each metric's mean against its threshold; a metric an error kept from being scored fails it."""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..core.errors import ConfigError
from ..core.key_values import split_item
from ..core.number_text import percent_text, score_text, threshold_text
from ..data.schema import Gate, GateResult, MetricErrors, MetricSummary
from ..data.spot_check_models import GateReading, MetricSpotCheck

# Each metric declares its default threshold (`Metric.default_threshold`), by verdicts mode where it has one: for
# graded verdicts the judge's calibration covers and for yes/no verdicts, the article's 0.80 / 0.70 / 0.65
# (faithfulness, context recall, context precision: a calibrated P(yes) estimates the chance a person calls the item
# supported, docs/calibration.md); 0.50 for raw graded ones, which run well below a share of yes/no verdicts (a 1.5B
# judge gives 0.3-0.9 to claims the context states; 0.5: the judge leans "yes" on average, fitted to nothing). The
# table: docs/gate.md#thresholds (tests/fast/run/test_threshold_table.py checks it against the definitions).


def default_thresholds(metrics: Iterable[Any], calibrated: Collection[str] = ()) -> dict[str, float]:
    """The default gate threshold of each metric that has one, by its configuration and the prompt families the
    judge's calibration covers (`calibrated`: the map's family names)."""
    chosen = {m.name: m.default_threshold(calibrated) for m in metrics}
    return {name: t for name, t in chosen.items() if t is not None}


def parse_threshold(text: str, where: str = "--threshold") -> tuple[str, float]:
    """'faithfulness=0.85' -> ('faithfulness', 0.85)."""
    name, value = split_item(text, where, "METRIC=VALUE", "faithfulness=0.8")
    return name, check_threshold(name, value)


def parse_thresholds(items: Iterable[str], base: Mapping[str, float] | None = None,
                     where: str = "--threshold") -> dict[str, float]:
    """METRIC=VALUE items over base (e.g. --threshold over the config file's thresholds)."""
    return {**(base or {}), **dict(parse_threshold(t, where) for t in items)}


def _share(value: object, what: str) -> float:
    """`value` as a number in [0, 1], else a ConfigError naming `what` (a threshold, the max error rate)."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= v <= 1.0:
        raise ConfigError(f"{what} must be in [0, 1], got {v}")
    return v


def check_threshold(name: str, value: object) -> float:
    return _share(value, f"threshold for {name}")


GATE_ON = ("mean", "lower-bound")


def check_gate_on(on: str) -> str:
    if on not in GATE_ON:
        raise ConfigError(f"gate-on must be one of {', '.join(GATE_ON)}, got {on!r}")
    return on


def check_max_error_rate(rate: object) -> float:
    return _share(rate, "max error rate")


def _pct(x: float) -> str:
    return percent_text(x, significant=3)


def metric_errors(s: MetricSummary, max_error_rate: float) -> MetricErrors | None:
    """A metric's samples left unscored by an error, and whether the run may still count the metric as evaluated:
    at most `max_error_rate` of its samples, and at least one scored sample. None when no error."""
    if not s.errors:
        return None
    n = s.scored + s.unscored
    rate = s.errors / n if n else 1.0
    allowed = rate <= max_error_rate and s.scored > 0
    counted = f"{s.errors} of {n} sample(s) unscored by an error"
    if allowed:
        message = f"{s.metric}: {counted} ({_pct(rate)} <= max error rate {_pct(max_error_rate)}), left out of the mean"
    elif rate > max_error_rate:
        message = f"{s.metric}: could not evaluate: {counted} ({_pct(rate)} > max error rate {_pct(max_error_rate)})"
    else:
        message = f"{s.metric}: could not evaluate: no scored sample; {counted}"
    if s.first_error:
        message += f": {s.first_error}"
    return MetricErrors(metric=s.metric, errors=s.errors, samples=n, rate=round(rate, 6), allowed=allowed,
                        first_error=s.first_error, message=message)


def _data_reasons(s: MetricSummary) -> str:
    reasons = ", ".join(f"{k} {v}" for k, v in s.unscored_reasons.items())
    return f": every sample lacked the data it needs ({reasons})" if reasons else ""


# An unscored reason that is one field missing, as the gate line names it ("no row has a reference").
_MISSING_FIELD = {"no_reference": "a reference", "no_contexts": "a retrieved context",
                  "no_retrieved_context_ids": "retrieved_context_ids",
                  "no_reference_context_ids": "reference_context_ids"}


def _not_evaluated(s: MetricSummary) -> str:
    """Why a metric has no scored sample, all of them lacking data: the field no row has, when one field is the
    reason of every sample ("context_recall: not evaluated (no row has a reference)"), else the reasons counted."""
    if len(s.unscored_reasons) == 1 and (reason := next(iter(s.unscored_reasons))) in _MISSING_FIELD:
        return f"{s.metric}: not evaluated (no row has {_MISSING_FIELD[reason]})"
    return f"{s.metric}: not evaluated (no scored sample{_data_reasons(s)})"


def people_reading(check: MetricSpotCheck, threshold: float, higher_is_better: bool = True) -> GateReading | None:
    """The gate read from a metric's prediction-powered interval: passes for sure (the whole interval on the passing
    side of the threshold), fails for sure (the whole interval on the failing side), else undecided, with about how
    many more labels would decide it: the interval's half-width z se shrinks as 1 / sqrt(n), so n' = n (z se / |mean
    - threshold|)^2 labels put the threshold outside it, if the mean and the spread per label stay as they are.
    None without a prediction-powered mean."""
    p = check.ppi_mean
    if p.mean is None or p.ci_low is None or p.ci_high is None:
        return None
    above, below = p.ci_low >= threshold, p.ci_high < threshold
    if above or below:
        return GateReading(threshold=threshold, reading="passes" if above == higher_is_better else "fails")
    more = None
    gap = abs(p.mean - threshold)
    if gap > 1e-9 and p.se and p.n:
        half = (p.ci_high - p.ci_low) / 2.0
        more = max(1, math.ceil(p.n * (half / gap) ** 2) - p.n)
    return GateReading(threshold=threshold, reading="undecided", more_labels=more)


def _people_label(s: MetricSummary, check: MetricSpotCheck, on: str, low: bool) -> tuple[float, str, float | None,
                                                                                        float | None]:
    """(value, label, ci_low, ci_high) of a metric gated on its prediction-powered mean (or its interval's bound)."""
    p = check.ppi_mean
    assert p.mean is not None
    bound, end = (p.ci_high, "upper") if low else (p.ci_low, "lower")
    head = f"{s.metric} prediction-powered (people's spot checks, {p.n} labelled draw(s))"
    if on == "lower-bound" and bound is not None:
        return bound, f"{head} CI {end} bound {score_text(bound)} (mean {score_text(p.mean)})", p.ci_low, p.ci_high
    return p.mean, f"{head} {score_text(p.mean)}", p.ci_low, p.ci_high


def run_gate(summary: list[MetricSummary], thresholds: dict[str, float], problems: dict[str, str], enabled=True,
             on: str = "mean", lower_is_better: Collection[str] = (), max_error_rate: float = 0.0,
             judge_failures: Mapping[str, str] | None = None, sources: Mapping[str, str] | None = None,
             people: Mapping[str, MetricSpotCheck] | None = None) -> Gate:
    """Each metric with a threshold passes when its mean (or, with on='lower-bound', the lower end of its 95%
    confidence interval: 'passes even if the judge was unlucky') reaches the threshold.

    A metric in `lower_is_better` (noise sensitivity) passes when its mean is at most the threshold; on='lower-bound'
    then holds the upper end of its interval (the unlucky end) against it.

    Fail closed: a metric (with a threshold or not) whose samples an error left unscored beyond `max_error_rate`, or
    with errors and no scored sample, could not be evaluated: `evaluated` is False and the gate does not pass (gated
    metrics get status "error"). A metric with no scored sample is "not evaluated" (and passes) only when every
    sample lacked the data it needs.

    judge_failures: metric -> why its judge was not judging (run/judge_check.py flat_metrics: its P(yes) flat over
    many items): such a metric could not be evaluated either, whatever `max_error_rate`.

    sources: metric -> why its threshold applies (MetricDefinition.threshold_basis), kept in each result.

    people: metric -> its spot checks (report.spot_checks): a metric whose checks are trustworthy (enough labelled
    draws) is held by its prediction-powered mean instead (or that interval's bound), and says so (`estimate`); the
    others keep the judge's, and a metric with labels but too few says why in its message."""
    check_gate_on(on)
    max_error_rate = check_max_error_rate(max_error_rate)
    errors = [x for x in (metric_errors(s, max_error_rate) for s in summary) if x is not None]
    for s in summary:
        if why := (judge_failures or {}).get(s.metric):
            errors.append(MetricErrors(metric=s.metric, errors=0, samples=s.scored + s.unscored, rate=0.0,
                                       allowed=False, first_error=why,
                                       message=f"{s.metric}: could not evaluate: {why}"))
    broken = {x.metric: x for x in errors if not x.allowed}
    results = []
    for s in summary:
        if s.metric not in thresholds:
            continue
        t = thresholds[s.metric]
        low = s.metric in lower_is_better
        ci: dict[str, Any] = {"ci_low": s.ci_low, "ci_high": s.ci_high, "higher_is_better": not low,
                              "threshold_source": (sources or {}).get(s.metric, "")}
        if s.metric in broken:
            results.append(GateResult(metric=s.metric, threshold=t, mean=s.mean, status="error", **ci,
                                      message=broken[s.metric].message))
            continue
        if s.mean is None:
            results.append(GateResult(metric=s.metric, threshold=t, mean=None, status="not_evaluated", **ci,
                                      message=_not_evaluated(s)))
            continue
        bound, end = (s.ci_high, "upper") if low else (s.ci_low, "lower")
        check, mean = (people or {}).get(s.metric), s.mean
        if check is not None and check.trustworthy and check.ppi_mean.mean is not None:
            value, label, ci["ci_low"], ci["ci_high"] = _people_label(s, check, on, low)
            ci["estimate"], mean = "prediction-powered", check.ppi_mean.mean
        elif on == "lower-bound" and bound is not None:
            value, label = bound, f"{s.metric} CI {end} bound {score_text(bound)} (mean {score_text(s.mean)})"
        elif on == "lower-bound":
            value, label = s.mean, f"{s.metric} {score_text(s.mean)} (1 scored sample: no interval, mean used)"
        else:
            value, label = s.mean, f"{s.metric} {score_text(s.mean)}"
        if check is not None and not check.trustworthy:
            label += f" (judge's; spot checks not used: {check.note or 'too few labels'})"
        if (value <= t) if low else (value >= t):
            results.append(GateResult(metric=s.metric, threshold=t, mean=mean, status="passed", compared=value,
                                      message=f"{label} {'<=' if low else '>='} {threshold_text(t)}"
                                              + (" (lower is better)" if low else ""), **ci))
        else:
            results.append(GateResult(
                metric=s.metric, threshold=t, mean=mean, status="failed", compared=value, **ci,
                message=f"{label} {'>' if low else '<'} {threshold_text(t)}"
                        + (" (lower is better)" if low else "")
                        + f": {problems.get(s.metric, 'above threshold' if low else 'below threshold')}",
            ))
    evaluated = not broken
    passed = evaluated and all(r.status != "failed" for r in results) if enabled else True
    return Gate(enabled=enabled, passed=passed, on=on, results=results, max_error_rate=max_error_rate,
                evaluated=evaluated, errors=errors)
