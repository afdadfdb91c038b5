"""A report's metric definitions: those it stores (Report.definitions), else, for a report written before they were
stored, the registry's for a metric it knows (configured with the run's metric_options), else a bare definition (a
metric this install does not know: generic evidence, higher is better, no default threshold)."""
from __future__ import annotations

from typing import Any

from ..data.metric_definition import MetricDefinition
from ..data.schema import Report
from .registry import all_metrics


def known_definition(name: str, options: dict[str, Any] | None = None) -> MetricDefinition:
    """The registry's definition of the metric `name` configured with `options`; a bare one for an unknown name."""
    metric = all_metrics().get(name)
    if metric is None:
        return MetricDefinition(name=name)
    return (metric.with_options(**options) if options else metric).describe()


def definitions_of(report: Report) -> dict[str, MetricDefinition]:
    """The definition of each of the report's metrics, in its order: the stored one, else known_definition."""
    options = report.meta.get("metric_options") or {}
    return {n: report.definitions.get(n) or known_definition(n, options.get(n)) for n in report.metrics}
