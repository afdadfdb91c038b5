"""What a metric is, as data: the definition each metric declares (metrics/) and each report stores
(Report.definitions), so the gate, `compare`, the evidence summaries, the ragas names and the HTML report read a stored report with the
definitions it was made with, and a metric the registry does not know (a plugin's) renders from its own."""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, Field

CALIBRATED = "calibrated"  # the thresholds key for graded verdicts the judge's calibration covers
NO_MODE = "default"  # the thresholds key of a metric without a verdicts mode
# Why a default threshold applies, by its thresholds key: what the gate lines and docs/gate.md's table say
THRESHOLD_BASES = {CALIBRATED: "calibrated default", "probability": "uncalibrated default",
                   "json": "verdicts=json default", NO_MODE: "default"}
# a threshold set with -t / --threshold, the settings file or thresholds=, not the metric's default: the gate says where
# (report.meta.threshold_origins: "set with -t", "set in localragas.toml"; run/regate.py regate)
GIVEN = "given"


class MetricDefinition(BaseModel):
    """One metric, configured as the run used it (its verdicts mode chosen)."""

    name: str
    definition: str = ""  # what the score measures (the HTML report's metric card, `localragas metrics`)
    problem: str = ""  # what a bad score means for the RAG system (gate messages)
    needs: list[str] = Field(default_factory=list)  # the sample fields it reads
    higher_is_better: bool = True  # False: a low score is the good one (noise sensitivity)
    default: bool = False  # computed when no metric is named
    # whether its scores come from the judge / the embedder (what a change of either may move: `compare`); True when
    # not recorded (a report written before them)
    uses_judge: bool = True
    uses_embedder: bool = True
    # the default gate threshold by verdicts mode ("probability", "json", and "calibrated" for graded verdicts the
    # judge's calibration covers), or under "default" for a metric without modes; empty: gated only when one is given
    thresholds: dict[str, float] = Field(default_factory=dict)
    mode: str | None = None  # the verdicts mode of this configuration (a key of thresholds); None: "default"
    # with graded verdicts: the prompt family a calibration map knows them by (None: not graded)
    graded_family: str | None = None
    ragas_name: str = ""  # the column name ragas gives the metric (--ragas-names); empty: the name itself
    items: str | None = None  # the evidence list of its judged items (claims, statements, chunks), if any
    # how evidence.brief summarises a sample's evidence in one line: {"kind": ..., parameters}; empty: generic
    summary: dict[str, Any] = Field(default_factory=dict)
    # how the HTML report's drill-down shows the evidence (report/html/app.js RENDERERS): {"kind": ..., "keys": the
    # evidence keys it shows, parameters}; empty: every key as a key/value list
    renderer: dict[str, Any] = Field(default_factory=dict)

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"

    @property
    def column(self) -> str:
        """The metric's ragas name (its own name when ragas has none)."""
        return self.ragas_name or self.name

    def default_key(self, calibrated: Collection[str] = ()) -> str:
        """Which of `thresholds` is the default for a judge whose calibration covers the prompt families
        `calibrated`: "calibrated" for graded verdicts the calibration covers, else the mode's own."""
        if self.graded_family is not None and self.graded_family in calibrated and CALIBRATED in self.thresholds:
            return CALIBRATED
        return self.mode or NO_MODE

    def default_threshold(self, calibrated: Collection[str] = ()) -> float | None:
        """The default gate threshold for a judge whose calibration covers the prompt families `calibrated`."""
        return self.thresholds.get(self.default_key(calibrated))

    def threshold_basis(self, threshold: float, calibrated: Collection[str] = ()) -> str:
        """Why `threshold` applies: the default's basis ("calibrated default", "uncalibrated default", ...) when it
        is the default, else "given"."""
        key = self.default_key(calibrated)
        return THRESHOLD_BASES.get(key, f"{key} default") if self.thresholds.get(key) == threshold else GIVEN


def item_summary(items: str, text: str, flag: str, all_good: str, some_bad: str, bad_when: bool = False) -> dict:
    """A summary (MetricDefinition.summary) of an evidence list of judged items: `all_good` when no item is bad, else
    `some_bad` and the first bad items quoted. An item is bad when its `flag` is `bad_when`; the phrases may hold
    {total} and {bad} (counts)."""
    return {"kind": "items", "items": items, "text": text, "flag": flag, "bad_when": bad_when, "all_good": all_good,
            "some_bad": some_bad}


def verdict_renderer(items: str, text: str, flag: str, yes: str, no: str) -> dict:
    """A renderer (MetricDefinition.renderer) of an evidence list of judged items: each with its verdict tag
    (`yes` / `no`) and its P(yes) when graded."""
    return {"kind": "verdicts", "keys": [items], "items": items, "text": text, "flag": flag, "yes": yes, "no": no}
