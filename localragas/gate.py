"""The quality gate: each metric's mean against its threshold."""
from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from .errors import ConfigError
from .schema import Gate, GateResult, MetricSummary

DEFAULT_THRESHOLDS: dict[str, float] = {
    "faithfulness": 0.80,
    "answer_relevancy": 0.75,
    "context_recall": 0.70,
    "context_precision": 0.65,
}
# With graded verdicts (verdicts=probability, the default for these three) a score is a mean of the judge's P(yes),
# which runs well below a share of yes/no verdicts (a 1.5B judge gives 0.3-0.9 to claims the context states). 0.5:
# the judge leans "yes" on average. Not fitted to any data; `localragas calibrate` suggests a threshold for a judge
# and labelled data (docs/accuracy.md).
GRADED_THRESHOLDS: dict[str, float] = {
    "faithfulness": 0.50,
    "context_recall": 0.50,
    "context_precision": 0.50,
}


def default_thresholds(metrics: Iterable[Any]) -> dict[str, float]:
    """The default gate threshold of each metric that has one, by its configuration (graded verdicts: their own)."""
    out: dict[str, float] = {}
    for m in metrics:
        graded = (getattr(m, "options", None) or {}).get("verdicts") == "probability"
        table = GRADED_THRESHOLDS if graded and m.name in GRADED_THRESHOLDS else DEFAULT_THRESHOLDS
        if m.name in table:
            out[m.name] = table[m.name]
    return out


def threshold_text(t: float) -> str:
    """0.8 -> '0.80', 0.805 -> '0.805': two decimals unless the threshold has more."""
    return f"{t:.2f}" if round(t, 2) == t else f"{t:g}"


def parse_threshold(text: str) -> tuple[str, float]:
    """'faithfulness=0.85' -> ('faithfulness', 0.85)."""
    name, sep, value = text.partition("=")
    if not sep:
        raise ConfigError(f"threshold '{text}' must look like METRIC=VALUE, e.g. faithfulness=0.8")
    return name.strip(), check_threshold(name.strip(), value)


def check_threshold(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"threshold for {name} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= v <= 1.0:
        raise ConfigError(f"threshold for {name} must be in [0, 1], got {v}")
    return v


GATE_ON = ("mean", "lower-bound")


def check_gate_on(on: str) -> str:
    if on not in GATE_ON:
        raise ConfigError(f"gate-on must be one of {', '.join(GATE_ON)}, got {on!r}")
    return on


def run_gate(summary: list[MetricSummary], thresholds: dict[str, float], problems: dict[str, str], enabled=True,
             on: str = "mean", lower_is_better: Collection[str] = ()) -> Gate:
    """Each metric with a threshold passes when its mean (or, with on='lower-bound', the lower end of its 95%
    confidence interval: 'passes even if the judge was unlucky') reaches the threshold.

    A metric in `lower_is_better` (noise sensitivity) passes when its mean is at most the threshold; on='lower-bound'
    then holds the upper end of its interval (the unlucky end) against it."""
    check_gate_on(on)
    results = []
    for s in summary:
        if s.metric not in thresholds:
            continue
        t = thresholds[s.metric]
        low = s.metric in lower_is_better
        ci = {"ci_low": s.ci_low, "ci_high": s.ci_high, "higher_is_better": not low}
        if s.mean is None:
            results.append(GateResult(metric=s.metric, threshold=t, mean=None, status="not_evaluated", **ci,
                                      message=f"{s.metric}: not evaluated (no scored sample)"))
            continue
        bound, end = (s.ci_high, "upper") if low else (s.ci_low, "lower")
        if on == "lower-bound" and bound is not None:
            value, label = bound, f"{s.metric} CI {end} bound {bound:.3f} (mean {s.mean:.3f})"
        elif on == "lower-bound":
            value, label = s.mean, f"{s.metric} {s.mean:.3f} (1 scored sample: no interval, mean used)"
        else:
            value, label = s.mean, f"{s.metric} {s.mean:.3f}"
        if (value <= t) if low else (value >= t):
            results.append(GateResult(metric=s.metric, threshold=t, mean=s.mean, status="passed", compared=value,
                                      message=f"{label} {'<=' if low else '>='} {threshold_text(t)}"
                                              + (" (lower is better)" if low else ""), **ci))
        else:
            results.append(GateResult(
                metric=s.metric, threshold=t, mean=s.mean, status="failed", compared=value, **ci,
                message=f"{label} {'>' if low else '<'} {threshold_text(t)}"
                        + (" (lower is better)" if low else "")
                        + f": {problems.get(s.metric, 'above threshold' if low else 'below threshold')}",
            ))
    passed = all(r.status != "failed" for r in results) if enabled else True
    return Gate(enabled=enabled, passed=passed, on=on, results=results)
