"""Aggregates over per-sample results: means of scored values, unscored counts and reasons."""
from __future__ import annotations

from collections import Counter

from .schema import MetricSummary, SampleResult


def reason_kind(reason: str) -> str:
    """'judge_error: reply truncated …' -> 'judge_error'."""
    return reason.split(":", 1)[0].strip()


def summarise(results: list[SampleResult], metrics: list[str]) -> list[MetricSummary]:
    out = []
    for name in metrics:
        got = [r.metrics[name] for r in results if name in r.metrics]
        values = [m.value for m in got if m.value is not None]
        reasons = Counter(reason_kind(m.unscored) for m in got if m.value is None and m.unscored)
        out.append(
            MetricSummary(
                metric=name,
                mean=round(sum(values) / len(values), 6) if values else None,
                scored=len(values),
                unscored=len(got) - len(values),
                unscored_reasons=dict(sorted(reasons.items())),
            )
        )
    return out


def by_category(results: list[SampleResult], metrics: list[str]) -> dict[str, list[MetricSummary]]:
    cats = sorted({r.category for r in results if r.category})
    return {c: summarise([r for r in results if r.category == c], metrics) for c in cats}
