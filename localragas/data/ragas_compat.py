"""ragas compatibility: ragas's metric names for reports, and ragas / Hugging Face datasets as input.

- ragas names: each metric declares the column name ragas (0.2-0.4) gives the same metric in its results
  (`Metric.ragas_name`), and a report stores it in its definitions (`MetricDefinition.ragas_name`).
  `to_ragas_names(report)` renames a report's metrics (for `--ragas-names` CSV and JSON); `from_ragas_names` undoes
  it when such a JSON report is read back (`localragas report`, `merge`, `compare`).
- ragas datasets as input: ragas's field names are read as localragas's (schema.FIELD_ALIASES); the Parquet and
  `datasets` folder readers are in data/table_readers.py, Python objects in data/sample_inputs.py.
docs/ragas-compat.md lists every definitional difference.
"""
from __future__ import annotations

from .schema import Report


def _renamed(report: Report, names: dict[str, str]) -> Report:
    def n(metric: str) -> str:
        return names.get(metric, metric)

    data = report.model_dump()
    data["metrics"] = [n(m) for m in data["metrics"]]
    data["definitions"] = {n(k): v for k, v in data["definitions"].items()}
    for s in data["summary"]:
        s["metric"] = n(s["metric"])
    for rows in data["by_category"].values():
        for s in rows:
            s["metric"] = n(s["metric"])
    for g in data["gate"]["results"]:
        g["metric"] = n(g["metric"])
    for s in data["samples"]:
        s["metrics"] = {n(k): v for k, v in s["metrics"].items()}
    meta = data["meta"]
    for key in ("thresholds", "threshold_origins"):  # by metric
        if isinstance(meta.get(key), dict):
            meta[key] = {n(k): v for k, v in meta[key].items()}
    return Report.model_validate(data)


def to_ragas_names(report: Report) -> Report:
    """The report with each metric under its ragas name; meta records the mapping so it can be read back."""
    if report.meta.get("metric_names") == "ragas":
        return report
    names = {m: d.column for m, d in report.definitions.items()}
    out = _renamed(report, names)
    out.meta["metric_names"] = "ragas"
    out.meta["localragas_names"] = {names.get(m, m): m for m in report.metrics}
    return out


def from_ragas_names(report: Report) -> Report:
    """A report written with ragas names, back under localragas names (a report without them is returned as is)."""
    if report.meta.get("metric_names") != "ragas":
        return report
    back = dict(report.meta.get("localragas_names") or {k: d.name for k, d in report.definitions.items()})
    out = _renamed(report, back)
    out.meta.pop("metric_names", None)
    out.meta.pop("localragas_names", None)
    return out
