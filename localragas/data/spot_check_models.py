"""The `spot_checks` block of a report, as data: what people's labels on a sample of this run's items say about the
judge's verdicts and about each metric's mean (quality/spot_checks.py computes it; run/gate.py reads it;
docs/report-format.md#spot_checks documents every field)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PPIResult(BaseModel):
    """A mean with its interval (the prediction-powered one, PPI++; or labels alone, lam 0): quality/ppi.py.

    lam: the weight of the judge's scores (0: labels alone; 1: plain PPI; tuned: PPI++, clipped to [0, 1]);
    n: the labelled draws it rests on; effective_labels: how many labels alone would give an interval as narrow
    (n x the labels-only variance / the prediction-powered one); se: the standard error the interval is
    mean +- z se of; trustworthy: n reaches the minimum (quality/ppi.py MIN_LABELS), note: why not."""

    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    lam: float = 0.0
    n: int = 0
    effective_labels: float | None = None
    se: float | None = None
    trustworthy: bool = False
    note: str | None = None


class Figure(BaseModel):
    """One agreement figure of the judge against people (accuracy, balanced accuracy, ROC AUC) with its 95% bootstrap
    interval over the labelled items; value None with a note when it is undefined (one class only)."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    note: str | None = None


class Disagreement(BaseModel):
    """A labelled item on which the judge's verdict and the people's (their mean label, rounded) differ."""

    key: str
    sample_id: str
    text: str
    judge_score: float
    label: float  # the people's mean label on it (1 supported / relevant, 0 not)
    reviewers: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class GateReading(BaseModel):
    """A metric's gate read from the prediction-powered interval (run/gate.py people_reading): passes for sure (the
    interval on the passing side of the threshold), fails for sure (on the failing side) or undecided (the threshold
    inside it); more_labels: about how many more labels would decide it, if the estimate and its spread per label
    stay as they are (None: decided, or the mean sits on the threshold)."""

    threshold: float
    reading: Literal["passes", "fails", "undecided"]
    more_labels: int | None = None


class MetricSpotCheck(BaseModel):
    """One metric's spot checks: who labelled what, the judge against the people on the labelled items, and the
    metric's mean three ways (judge alone, labels alone, prediction-powered)."""

    metric: str
    unit: Literal["item", "sample"]  # what one draw is: an item (faithfulness, context recall) or a sample (precision)
    population: int  # the scored samples the draws were made from
    items: int  # the items of those samples (statements, reference statements or chunks)
    labelled: int  # distinct items with at least one supported / not label
    draws: int  # labelled draws the means rest on (an item drawn twice counts twice; a sample for context precision)
    skipped: int  # items every reviewer skipped
    not_drawn: int = 0  # labelled items of no counted draw (after a gap in the plan, or without a design): figures only
    reviewers: list[str] = Field(default_factory=list)
    disagreements: int = 0  # items on which two reviewers gave different labels
    kappa: float | None = None  # Cohen's kappa of the two reviewers who labelled the most items in common
    kappa_reviewers: list[str] = Field(default_factory=list)
    kappa_items: int = 0
    item_threshold: float = 0.5  # an item counts as supported (relevant) when its judge score reaches it
    accuracy: Figure = Field(default_factory=Figure)
    balanced_accuracy: Figure = Field(default_factory=Figure)
    roc_auc: Figure = Field(default_factory=Figure)
    bias: float | None = None  # the judge's mean minus the people's, over the labelled draws
    judge_mean: PPIResult  # the report's: the judge's scores alone, its bootstrap interval (ignores the judge's errors)
    labels_mean: PPIResult  # the labels alone
    ppi_mean: PPIResult  # prediction-powered (PPI++): the judge's mean corrected by the labelled residuals
    trustworthy: bool = False  # enough labels (ppi.MIN_LABELS) for the gate to read the prediction-powered mean
    note: str | None = None
    gate: GateReading | None = None  # set by the gate (run/gate.py) when the metric has a threshold
    disagreeing: list[Disagreement] = Field(default_factory=list)


class SpotChecks(BaseModel):
    """The report's `spot_checks`: the labels files read, the sampling design, the figures per metric."""

    files: list[str] = Field(default_factory=list)
    labels: int = 0  # label lines read (every reviewer's, last line per reviewer and item)
    level: float = 0.95
    minimum: int = 10  # labelled draws below which a metric's prediction-powered interval is not trusted
    design: str = ""
    metrics: dict[str, MetricSpotCheck] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
