"""`localragas calibrate --fit FILE --labels LABELS --report RUN`: a calibration map fitted on people's labels of a
run's items (docs/spot-checks.md, docs/calibration.md), with agreement figures that are cross-fitted.

Each labelled item of a graded metric gives one point: the judge's RAW P(yes) kept in the item's evidence
(`p_<flag>_raw`: never the calibration in effect during the run, so refitting does not compound maps) and the people's
verdict (the mean of the reviewers' labels, skips left out; an item they split on evenly is left out). Items are pooled
per prompt family (faithfulness and context recall both ask verify_statement) and fitted with the same logistic map as
`calibrate --fit` on labelled rows (quality/calibration_fit.py, judges/calibration_map.py).

Cross-fitting: the items of a family are split into k folds (5, or one item per fold -- leave-one-out -- below
LOO_BELOW items); each item is scored by the map fitted on the other folds, so the ROC AUC, the balanced accuracy at
the shipped threshold and the Brier score printed come from items the fit did not see. A threshold is suggested for a
metric only when a threshold fitted on the other folds (Youden's J) beats the shipped threshold's balanced accuracy
on the held-out items, and the judge ranks the family's items better than chance (the cross-fitted ROC AUC's 95%
interval above 0.5): on the dev split a fitted threshold won on BEGIN, QAGS and WikiQA from 30 labels but lost at
every n <= 100 on FaithBench and context recall, where the judge is near chance (docs/spot-checks.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..core.errors import ConfigError
from ..core.number_text import score_text as _n
from ..data.labels import Label, latest
from ..data.schema import Report
from ..judge_calls.verdicts import raw_p_yes
from ..judges.calibration_map import CalibrationMap, FamilyMap, brier, fit_logistic
from ..metrics import all_metrics
from ..metrics.base import WithVerdicts
from .agreement import balanced_accuracy, best_threshold, bootstrap_statistic, roc_auc
from .calibration_fit import MIN_PER_CLASS, FamilyFit, FamilyItems, fit_family
from .review_items import ITEM_METRICS, review_items
from .spot_checks import mean_label, refuse_foreign

FOLDS = 5
LOO_BELOW = 50  # fewer labelled items in a family: leave-one-out (each fold would hold < 10 items)
KEEP = ("keep the shipped threshold: a threshold fitted on these labels did not beat it on items it did not see")


@dataclass
class MetricThreshold:
    """A metric's threshold reading, cross-fitted: balanced accuracy of the shipped threshold and of a threshold fitted
    on the other folds, on the held-out items; `suggested`: the threshold fitted on all items, only when it won."""

    metric: str
    items: int
    shipped: float
    ba_shipped: float | None
    ba_fitted: float | None
    suggested: float | None
    chance: bool = False  # the family's cross-fitted ROC AUC interval reaches 0.5: no threshold is suggested

    def text(self) -> str:
        def ba(v: float | None) -> str:
            return "undefined (one class)" if v is None else _n(v)

        head = (f"{self.metric} ({self.items} items): balanced accuracy on held-out items {ba(self.ba_shipped)} at "
                f"the shipped threshold {_n(self.shipped)}, {ba(self.ba_fitted)} at a threshold fitted on the other "
                "folds; ")
        if self.suggested is None:
            return head + KEEP + (" (and the judge ranks these items no better than chance: ROC AUC's interval "
                                  "reaches 0.5)" if self.chance else "")
        return head + f"suggested threshold {_n(self.suggested)} (-t {self.metric}={_n(self.suggested)})"


@dataclass
class CrossFit:
    """What the cross-fitted map of one family found: folds, ROC AUC of the held-out calibrated values (with its
    interval), Brier of the raw P(yes) and of the held-out calibrated values, and each metric's threshold reading."""

    family: str
    folds: int
    auc: float | None
    auc_ci: tuple[float, float] | None
    brier_raw: float
    brier_cross: float
    thresholds: list[MetricThreshold]

    def lines(self) -> list[str]:
        auc = "undefined" if self.auc is None else _n(self.auc) + (
            f" [{_n(self.auc_ci[0])}, {_n(self.auc_ci[1])}]" if self.auc_ci else "")
        how = "leave-one-out" if self.folds == 0 else f"{self.folds}-fold"
        return [f"{self.family}: cross-fitted ({how}) on items the fit did not see: ROC AUC {auc}; Brier "
                f"{_n(self.brier_raw, digits=4)} raw -> {_n(self.brier_cross, digits=4)} calibrated",
                *("  " + t.text() for t in self.thresholds)]


def _metric(report: Report, name: str) -> WithVerdicts | None:
    metric = all_metrics().get(name)
    if not isinstance(metric, WithVerdicts):
        return None
    options = (report.meta.get("metric_options") or {}).get(name) or {}
    metric = cast(WithVerdicts, metric.with_options(**options))
    return metric if metric.graded else None


def labelled_items(report: Report, labels: list[Label], data_path: str | Path | None = None
                   ) -> tuple[dict[str, FamilyItems], dict[str, list[str]]]:
    """Per prompt family the labelled items' raw P(yes) and people's verdict, and each item's metric (parallel to the
    family's lists). Labels whose keys are not items of this run: LabelsError (exit 2), as for `report --labels`.
    data_path: the run's data file, for a report that keeps no sample text (review_items)."""
    names = [m for m in report.metrics if m in ITEM_METRICS and any(lab.metric == m for lab in labels)]
    items = review_items(report, names, data_path=data_path) if names else []
    refuse_foreign(labels, {it.key for it in items})
    by_key = latest(labels)
    asked = (report.meta.get("prompts") or {}).get("sha256") or {}
    samples = {s.id: s for s in report.samples}
    out: dict[str, FamilyItems] = {}
    which: dict[str, list[str]] = {}
    for name in names:
        metric = _metric(report, name)
        if metric is None:
            continue
        hashes = {p: asked.get(p, sha) for p, sha in metric.prompt_hashes(None).items()}
        got = out.setdefault(metric.graded_family, FamilyItems(metric.graded_family, prompt_sha256=hashes))
        which.setdefault(metric.graded_family, [])
        got.metrics.append(name)
        for it in items:
            if it.metric != name or it.key not in by_key:
                continue
            people = mean_label(by_key[it.key])
            got.rows += 1
            evidence = samples[it.sample_id].metrics[name].evidence.get(ITEM_METRICS[name][0]) or []
            raw = raw_p_yes(evidence[it.index]) if it.index < len(evidence) else None
            if people is None or people == 0.5 or raw is None:
                continue
            got.raw.append(raw)
            got.labels.append(int(people > 0.5))
            which[metric.graded_family].append(name)
    if not any(f.raw for f in out.values()):
        raise ConfigError("--fit --labels: no labelled item of a metric with graded verdicts (faithfulness, "
                          "context_recall, context_precision) with its raw P(yes) in the report: nothing to fit")
    return out, which


def _folds(n: int) -> np.ndarray:
    """Each item's fold: i mod k (items in the report's order), k = FOLDS, or n (leave-one-out) below LOO_BELOW."""
    k = n if n < LOO_BELOW else FOLDS
    return np.arange(n) % k


def _cal(a: float, b: float, raw: np.ndarray) -> np.ndarray:
    m = FamilyMap(a, b)
    return np.asarray([m(float(p)) for p in raw])


def cross_fit(items: FamilyItems, metrics: list[str], shipped: dict[str, float]) -> CrossFit:
    """The family's cross-fitted figures (see the module's docstring); shipped: each metric's calibrated default."""
    raw, y, names = np.asarray(items.raw), np.asarray(items.labels), np.asarray(metrics)
    fold = _folds(raw.size)
    held = np.zeros(raw.size)
    fitted_pred = {m: np.zeros(raw.size, dtype=bool) for m in shipped}
    for f in np.unique(fold):
        train, test = fold != f, fold == f
        a, b = fit_logistic(raw[train].tolist(), y[train].tolist())
        held[test] = _cal(a, b, raw[test])
        inside = _cal(a, b, raw[train])
        for m in shipped:
            own = train & (names == m)
            got = best_threshold(y[own], inside[own[train]]) if own.any() else None
            t = got[0] if got else shipped[m]
            fitted_pred[m][test] = held[test] >= t
    auc = roc_auc(y, held)
    ci, _ = bootstrap_statistic(roc_auc, (y, held)) if auc is not None else (None, None)
    chance = ci is None or ci[0] <= 0.5  # a ranking no better than chance: no threshold to fit
    rows = []
    for m, t in shipped.items():
        own = names == m
        ba_s = balanced_accuracy(y[own], held[own], t)
        ba_f = balanced_accuracy(y[own], fitted_pred[m][own].astype(float), 0.5)
        suggested = None
        if ba_s is not None and ba_f is not None and ba_f > ba_s and not chance:
            full = fit_logistic(raw.tolist(), y.tolist())
            got = best_threshold(y[own], _cal(*full, raw[own]))
            suggested = round(got[0], 4) if got else None
        rows.append(MetricThreshold(m, int(own.sum()), t, ba_s, ba_f, suggested, chance))
    return CrossFit(items.family, 0 if fold.max() + 1 == raw.size else FOLDS, auc, ci, brier(raw.tolist(),
                    y.tolist()), brier(held.tolist(), y.tolist()), rows)


def fit_from_labels(report: Report, labels: list[Label], *, labels_files: list[str | Path], report_path: str | Path,
                    data_path: str | Path | None = None) -> tuple[CalibrationMap, list[FamilyFit], list[CrossFit]]:
    """The calibration map fitted on all the labelled items of each family (refused as `calibrate --fit` refuses: too
    few of a class, a slope <= 0), what each fit found, and its cross-fitted figures."""
    families, which = labelled_items(report, labels, data_path)
    fits, crossed = [], []
    source: Any = {"labels": [str(p) for p in labels_files], "report": str(report_path)}
    maps = {}
    for family, items in families.items():
        if not items.raw:
            continue
        pos = sum(items.labels)
        if min(pos, len(items.labels) - pos) < MIN_PER_CLASS:
            raise ConfigError(f"--fit --labels: {family} ({', '.join(items.metrics)}): {len(items.labels)} labelled "
                              f"items ({pos} labelled yes, {len(items.labels) - pos} no; skipped and evenly split items "
                              f"left out); a fit needs at least {MIN_PER_CLASS} of each: label more items "
                              "(localragas review --n)")
        fit = fit_family(items)
        shipped = {}
        for m in dict.fromkeys(which[family]):
            metric = _metric(report, m)
            t = metric.thresholds.get("calibrated") if metric else None
            if t is not None:
                shipped[m] = t
        crossed.append(cross_fit(items, which[family], shipped))
        fits.append(fit)
        maps[family] = FamilyMap(fit.a, fit.b, {"items": fit.items, "positives": fit.positives,
                                                "metrics": fit.metrics, "source": source}, items.prompt_sha256)
    judge = {k: v for k, v in (report.meta.get("judge") or {}).items() if k in ("name", "fingerprint", "sha256")}
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return CalibrationMap(maps, judge, created), fits, crossed
