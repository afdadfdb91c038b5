"""`localragas calibrate --fit FILE`: a calibration map fitted to labelled rows (localragas.judges.calibration_map).

Item labels: a row's binary label is taken as the label of its metric's one judged item when the metric scored
exactly one item (one claim, one statement, one chunk); rows with more items are left out of the fit, as a row's label
does not say which of its items a person rejected. A labelled file of single-statement rows (one row per sentence)
gives the most items. One prompt family per metric scored (faithfulness and context recall share verify_statement:
their items are pooled). The fit reads each item's RAW P(yes) (`p_<flag>_raw`): the calibration in effect during
the run is not applied to the fit data, so refitting never compounds a map. Each family records the template sha256
of the prompts its P(yes) were asked with (prompt_sha256): a run asking them differently does not apply its map.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from ..judge_calls.verdicts import raw_key
from ..judges.calibration_map import CalibrationMap, FamilyMap, brier, fit_logistic
from ..core.errors import ConfigError
from ..core.number_text import score_text as _n
from ..metrics import all_metrics
from ..metrics.base import WithVerdicts

if TYPE_CHECKING:
    from .calibration_results import CalibrationRun
    from ..judges import Judge
    from ..prompts.overrides import PromptOverrides

MIN_PER_CLASS = 10  # items of each class (supported / not) a fit needs


@dataclass
class FamilyItems:
    """The single-item rows of one prompt family: each item's raw P(yes) and its row's label."""

    family: str
    metrics: list[str] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    rows: int = 0  # labelled binary rows seen, single-item or not
    prompt_sha256: dict[str, str] = field(default_factory=dict)  # the templates its P(yes) were asked with


@dataclass
class FamilyFit:
    family: str
    metrics: list[str]
    items: int
    positives: int
    a: float
    b: float
    brier_raw: float
    brier_calibrated: float
    mean_raw: float
    mean_calibrated: float

    @property
    def share_positive(self) -> float:
        return self.positives / self.items

    def text(self) -> str:
        return (f"{self.family} ({', '.join(self.metrics)}): a={_n(self.a, digits=4)} b={_n(self.b, digits=4)} on "
                f"{self.items} items ({self.positives} supported); Brier {_n(self.brier_raw, digits=4)} raw -> "
                f"{_n(self.brier_calibrated, digits=4)} calibrated; mean P(yes) {_n(self.mean_raw)} raw -> "
                f"{_n(self.mean_calibrated)} calibrated, share supported {_n(self.share_positive)}")


def family_items(run: "CalibrationRun", overrides: "PromptOverrides | None" = None) -> dict[str, FamilyItems]:
    """The fit data of each prompt family: the binary-labelled rows of graded-verdict metrics whose metric scored
    exactly one item, with that item's raw P(yes), and the template hashes of the prompts they were asked with (the
    run's prompt overrides, `overrides`, applied)."""
    known = all_metrics()
    out: dict[str, FamilyItems] = {}
    for c in run.results:
        metric = known.get(c.metric)
        if c.kind != "binary" or not isinstance(metric, WithVerdicts):
            continue
        metric = cast(WithVerdicts, metric.with_options(**c.metric_options))
        if not metric.graded:
            continue
        got = out.setdefault(metric.graded_family,
                             FamilyItems(metric.graded_family, prompt_sha256=metric.prompt_hashes(overrides)))
        if c.metric not in got.metrics:
            got.metrics.append(c.metric)
        key = raw_key(metric.item_fields[2])
        for row in c.per_row:
            got.rows += 1
            if row.items is not None and len(row.items) == 1:
                got.raw.append(float(row.items[0][key]))
                got.labels.append(int(row.label))
    if not out:
        raise ConfigError("--fit: no binary-labelled rows of a metric with graded verdicts (faithfulness, "
                          "context_recall, context_precision with verdicts=probability): nothing to fit")
    return out


def fit_family(items: FamilyItems) -> FamilyFit:
    """The logistic map of one family; ConfigError with the counts when there are too few items of either class or
    the judge ranks them backwards (a slope <= 0)."""
    pos = sum(items.labels)
    neg = len(items.labels) - pos
    counts = (f"{items.family} ({', '.join(items.metrics)}): {len(items.labels)} single-item rows of "
              f"{items.rows} ({pos} labelled 1, {neg} labelled 0)")
    if pos < MIN_PER_CLASS or neg < MIN_PER_CLASS:
        raise ConfigError(f"--fit: {counts}; a fit needs at least {MIN_PER_CLASS} of each (only rows whose metric "
                          "scored exactly one item give an item label: one row per sentence gives the most)")
    a, b = fit_logistic(items.raw, items.labels)
    if a <= 0:
        raise ConfigError(f"--fit: {counts}: the fitted slope is {_n(a, digits=4)} <= 0, the judge ranks these items "
                          "backwards; no calibration can be made of it")
    m = FamilyMap(a, b)
    calibrated = [m(p) for p in items.raw]
    n = len(items.raw)
    return FamilyFit(items.family, items.metrics, n, pos, a, b, brier(items.raw, items.labels),
                     brier(calibrated, items.labels), sum(items.raw) / n, sum(calibrated) / n)


def fit_calibration(run: "CalibrationRun", judge: "Judge",
                    overrides: "PromptOverrides | None" = None) -> tuple[CalibrationMap, list[FamilyFit]]:
    """A calibration map for `judge` fitted on the run's labelled rows (asked with the user's instruction texts
    `overrides`, if any), and what each family's fit found."""
    items = family_items(run, overrides)
    fits = [fit_family(i) for i in items.values()]
    source: Any = run.meta.get("files") or []
    families = {f.family: FamilyMap(f.a, f.b, {"items": f.items, "positives": f.positives, "metrics": f.metrics,
                                               "source": source}, items[f.family].prompt_sha256)
                for f in fits}
    identity = {"name": judge.name, "fingerprint": judge.fingerprint}
    if getattr(judge, "sha256", None):
        identity["sha256"] = judge.sha256  # type: ignore[attr-defined]
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return CalibrationMap(families, identity, created), fits
