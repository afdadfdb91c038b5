"""What `localragas calibrate` measured, as data: a Calibration per source, metric and label kind (with each row's
outcome) and the CalibrationRun that holds them, and the plain lines their repr() shows. The terminal table, the
Markdown and the files are in report/calibration.py, which reads these models."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .agreement import MEASURES, Agreement, Estimate, Kind
from ..judges.calibration_map import uncalibrated_note
from ..core.number_text import count_text, score_text, score_with_interval, threshold_text


class RowOutcome(BaseModel):
    """One labelled row: the human label, the metric's score or why it has none."""

    id: str
    line: int | None = None
    label: float
    score: float | None = None
    unscored: str | None = None
    pair: str | None = None
    better: bool | None = None
    # the metric's judged items as its evidence lists them (claims, statements or chunks, each with its verdict and,
    # graded, its calibrated and raw P(yes)); None for a metric without items, or an unscored row
    items: list[dict[str, Any]] | None = None


class Calibration(BaseModel):
    """Agreement of one metric with one kind of human label in one source: a file, or rows given in Python."""

    file: str  # the file's path, or "DataFrame", "samples" (a list), "Dataset" for rows given in Python
    dataset_sha256: str | None = None  # the file's
    metric: str  # the metric the rows were scored with
    label_metric: str | None = None  # the labels' metric, when the rows were scored with another (--metric)
    metric_options: dict[str, Any] = Field(default_factory=dict)  # the metric's settings, e.g. {"verdicts": "json"}
    kind: Kind
    rows: int
    pairs: int | None = None  # pairwise
    scored: int
    unscored: int
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    agreement: Agreement
    seconds_per_sample: float | None = None  # judging time per row (answers from the cache take ~0 s)
    judge_calls: int = 0
    cache_hits: int = 0
    judge: dict[str, Any] = Field(default_factory=dict)
    embedder: dict[str, Any] | None = None
    # graded verdicts: whether the scores went through the judge's calibration map (False: its raw P(yes));
    # None for a metric without graded verdicts
    calibrated: bool | None = None
    notes: list[str] = Field(default_factory=list)
    per_row: list[RowOutcome] = Field(default_factory=list)

    def __repr__(self) -> str:
        """The counts and each figure with its interval; every row is in per_row, the whole in model_dump_json()."""
        return calibration_text(self)

    __str__ = __repr__


class CalibrationRun(BaseModel):
    """What `localragas calibrate` measured (its --out file): meta (judge, settings, CI method), a Calibration per
    source, metric and label kind."""

    meta: dict[str, Any] = Field(default_factory=dict)
    results: list[Calibration] = Field(default_factory=list)

    def __repr__(self) -> str:
        """A few lines per result; the whole run is model_dump_json() (or report.calibration.write_calibration)."""
        return calibration_text(self)

    __str__ = __repr__


def figure_text(e: Estimate | None) -> str:
    """A figure with its interval, e.g. 0.812 [0.701, 0.903]; — when it has no value."""
    return "—" if e is None else score_with_interval(e.value, e.ci_low, e.ci_high)


def unscored_text(c: Calibration) -> str:
    reasons = ", ".join(f"{k} {v}" for k, v in c.unscored_reasons.items())
    return f"{c.unscored}" + (f" ({reasons})" if reasons else "")


def suggested_text(c: Calibration) -> str:
    """The suggested threshold of binary labels, with the gate's; "" for other kinds."""
    a = c.agreement
    if c.kind != "binary":
        return ""
    if a.suggested_threshold is None:
        return "—"
    gate = f" (gate {threshold_text(a.gate_threshold)})" if a.gate_threshold is not None else ""
    return f"{score_text(a.suggested_threshold)}{gate}"


def rows_text(c: Calibration) -> str:
    return f"{c.rows} ({c.pairs} pairs)" if c.pairs is not None else str(c.rows)


def measure_label(name: str) -> str:
    """An agreement figure's title, marked when lower is better."""
    title, higher = MEASURES.get(name, (name, True))
    return title if higher else f"{title} (lower is better)"


def calibration_source(meta: dict) -> str:
    """The calibration in effect during the run (meta.calibration): catalogue:NAME, its file, or none."""
    cal = meta.get("calibration")
    if not cal:
        return "none"
    return cal.get("source") or "a map given in Python"


def calibration_text(item: CalibrationRun | Calibration) -> str:
    """A few plain lines for repr(): per result its counts, then each figure over the scored rows with its CI."""
    results = item.results if isinstance(item, CalibrationRun) else [item]
    lines = []
    if isinstance(item, CalibrationRun):
        judge = (item.meta.get("judge") or {}).get("name", "?")
        lines.append(f"<localragas CalibrationRun: {count_text(len(results), 'result')}, judge {judge}, "
                     f"calibration: {calibration_source(item.meta)}>")
        note = uncalibrated_note(item.meta)
        lines += [f"  {note}"] if note else []
    indent = "  " if isinstance(item, CalibrationRun) else ""
    for c in results:
        head = (f"{c.file}: {c.metric} ({c.kind} labels), rows {rows_text(c)}, scored {c.scored}, "
                f"unscored {unscored_text(c)}")
        if c.kind == "binary":
            head += f"; suggested threshold {suggested_text(c)}"
        lines.append(indent + head)
        width = max((len(measure_label(name)) for name in c.agreement.measures), default=0)
        lines += [f"{indent}  {measure_label(name):<{width}}  {figure_text(e)}"
                  for name, e in c.agreement.measures.items()]
    return "\n".join(lines)
