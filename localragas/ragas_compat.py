"""ragas compatibility: ragas's metric names for reports, and ragas / Hugging Face datasets as input.

- `RAGAS_NAMES`: each localragas metric -> the column name ragas (0.2-0.4) gives the same metric in its results.
  `to_ragas_names(report)` renames a report's metrics (for `--ragas-names` CSV and JSON); `from_ragas_names` undoes
  it when such a JSON report is read back (`localragas report`, `merge`, `compare`).
- ragas datasets as input: ragas's field names are read as localragas's (schema.FIELD_ALIASES); the Parquet and
  `datasets` folder readers are in table_readers.py, Python objects in sample_inputs.py.
docs/ragas-compat.md lists every definitional difference.
"""
from __future__ import annotations

from .schema import Report

RAGAS_NAMES: dict[str, str] = {
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevancy",
    "context_precision": "context_precision",
    "context_recall": "context_recall",
    "context_entity_recall": "context_entity_recall",
    "noise_sensitivity_relevant": "noise_sensitivity(mode=relevant)",
    "noise_sensitivity_irrelevant": "noise_sensitivity(mode=irrelevant)",
    "factual_correctness": "factual_correctness(mode=f1)",
    "factual_correctness_precision": "factual_correctness(mode=precision)",
    "factual_correctness_recall": "factual_correctness(mode=recall)",
    "answer_correctness": "answer_correctness",
    "semantic_similarity": "semantic_similarity",
    "context_relevance": "nv_context_relevance",
    "id_based_context_precision": "id_based_context_precision",
    "id_based_context_recall": "id_based_context_recall",
}


def _renamed(report: Report, names: dict[str, str]) -> Report:
    def n(metric: str) -> str:
        return names.get(metric, metric)

    data = report.model_dump()
    data["metrics"] = [n(m) for m in data["metrics"]]
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
    if isinstance(meta.get("thresholds"), dict):
        meta["thresholds"] = {n(k): v for k, v in meta["thresholds"].items()}
    return Report.model_validate(data)


def to_ragas_names(report: Report) -> Report:
    """The report with each metric under its ragas name; meta records the mapping so it can be read back."""
    if report.meta.get("metric_names") == "ragas":
        return report
    out = _renamed(report, RAGAS_NAMES)
    out.meta["metric_names"] = "ragas"
    out.meta["localragas_names"] = {RAGAS_NAMES.get(m, m): m for m in report.metrics}
    return out


def from_ragas_names(report: Report) -> Report:
    """A report written with ragas names, back under localragas names (a report without them is returned as is)."""
    if report.meta.get("metric_names") != "ragas":
        return report
    back = dict(report.meta.get("localragas_names") or {v: k for k, v in RAGAS_NAMES.items()})
    out = _renamed(report, back)
    out.meta.pop("metric_names", None)
    out.meta.pop("localragas_names", None)
    return out
