"""What people's labels on a sample of a run's items say (docs/spot-checks.md): per metric, the judge against the
people on the labelled items, and the metric's mean three ways (the judge alone, the labels alone, prediction-powered),
as the report's `spot_checks` block (data/spot_check_models.py). The gate reads the prediction-powered mean of a
metric with enough labels (run/gate.py); `plan` says before labelling how many labels would decide the gate.

Labels count for the means only as draws of the plan they were drawn in (quality/review_draw.py): per design (seed),
the draws from the start of the plan up to the first draw whose item has no label line. Labels whose keys are not
items of this run are refused: prediction-powered inference is valid only on labels drawn from the run it corrects.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ..core.errors import LabelsError
from ..data.labels import Label, latest, read_labels
from ..data.schema import Report, Sample
from ..data.spot_check_models import Disagreement, Figure, MetricSpotCheck, PPIResult, SpotChecks
from ..metrics.context_precision import average_precision
from ..run.regate import regate
from ..run.stats import CI_LEVEL, bootstrap_ci, cluster_codes, cluster_key
from .agreement import balanced_accuracy, bootstrap_statistic, roc_auc
from .ppi import MIN_LABELS, labels_only, ppi_mean
from .review_draw import draw
from .review_items import ITEM_THRESHOLD, SAMPLE_UNIT, ReviewItem, review_items, reviewable

DESIGN = ("per metric, draws with replacement: a scored sample uniformly, then one of its items uniformly (context "
          "precision: the whole sample); seeded")
# The judge's error assumed by `plan` before any label: the spread (SD) of label - judge score per labelled item. 0.44
# is the default judge's on the dev split (BEGIN rows kept aside: 30 labels gave a prediction-powered interval ~0.31
# wide, 50 labels ~0.25; issue 48), i.e. a judge that ranks items usefully (ROC AUC ~0.8) and is miscalibrated.
RESIDUAL_SD = 0.44


def read_label_files(paths: Iterable[str | Path]) -> list[Label]:
    """Every label of the files, in order (several reviewers' files are simply read one after another)."""
    return [lab for p in paths for lab in read_labels(p)]


def refuse_foreign(labels: Sequence[Label], known: set[str]) -> None:
    foreign = [lab for lab in labels if lab.key not in known]
    if not foreign:
        return
    first = foreign[0]
    matched = len(labels) - len(foreign)
    raise LabelsError(first.source or "labels", first.line, "key",
                      f"item {first.key!r} is not an item of this run ({matched} of {len(labels)} label(s) match it): "
                      "labels are valid only for the run whose items they are (re-label this run with `localragas "
                      "review`, or give the report they were made on)")


def mean_label(by_reviewer: Mapping[str, Label]) -> float | None:
    given = [lab.label for lab in by_reviewer.values() if lab.label is not None]
    return sum(given) / len(given) if given else None


def _kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two reviewers' 0/1 labels on the same items; None where chance agreement is 1 (one class)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    po = float((x == y).mean())
    pe = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    return None if pe >= 1.0 else round((po - pe) / (1.0 - pe), 6)


def _reviewer_agreement(by_key: Mapping[str, Mapping[str, Label]]) -> dict[str, Any]:
    """Disagreements (items two reviewers labelled differently) and Cohen's kappa of the pair of reviewers with the
    most labelled items in common."""
    pairs: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    disagreements = 0
    for by in by_key.values():
        given = {r: lab.label for r, lab in by.items() if lab.label is not None}
        if len(set(given.values())) > 1:
            disagreements += 1
        names = sorted(given)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                pairs[(a, b)].append((int(given[a]), int(given[b])))  # type: ignore[arg-type]
    out: dict[str, Any] = {"disagreements": disagreements}
    if pairs:
        (a, b), common = max(pairs.items(), key=lambda kv: (len(kv[1]), kv[0]))
        out.update(kappa=_kappa([x for x, _ in common], [y for _, y in common]), kappa_reviewers=[a, b],
                   kappa_items=len(common))
    return out


def _figure(stat, y: np.ndarray, s: np.ndarray, why: str | None) -> Figure:
    n = int(y.size)
    value = stat(y, s) if n else None
    if value is None:
        return Figure(n=n, note=why or ("no labelled item" if n == 0 else "undefined"))
    ci, note = bootstrap_statistic(stat, (y, s))
    return Figure(value=round(float(value), 6), ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None, n=n,
                  note=note)


def _accuracy(y: np.ndarray, s: np.ndarray) -> float:
    return float(((s >= ITEM_THRESHOLD) == y.astype(bool)).mean())


def _judge_vs_people(items: Sequence[ReviewItem], people: Mapping[str, float]) -> dict[str, Any]:
    """Accuracy, balanced accuracy at the item threshold and ROC AUC of the judge's item scores against the people's
    verdict (their mean label; an item they split on evenly is left out), with the disagreeing items."""
    rows = [(it, people[it.key]) for it in items if it.key in people and people[it.key] != 0.5]
    y = np.asarray([p > 0.5 for _, p in rows], dtype=float)
    s = np.asarray([it.judge_score for it, _ in rows], dtype=float)
    pos = int(y.sum())
    one_class = None if 0 < pos < y.size else f"only one class among the labelled items ({pos} of {y.size} yes)"
    return {"accuracy": _figure(_accuracy, y, s, None),
            "balanced_accuracy": _figure(lambda a, b: balanced_accuracy(a, b, ITEM_THRESHOLD), y, s, one_class),
            "roc_auc": _figure(roc_auc, y, s, one_class)}


def _disagreeing(items: Sequence[ReviewItem], people: Mapping[str, float],
                 by_key: Mapping[str, Mapping[str, Label]]) -> list[Disagreement]:
    out = []
    for it in items:
        p = people.get(it.key)
        if p is None or p == 0.5 or (p > 0.5) == it.judge_verdict:
            continue
        by = by_key[it.key]
        out.append(Disagreement(key=it.key, sample_id=it.sample_id, text=it.text, judge_score=round(it.judge_score, 4),
                                label=round(p, 4), reviewers=sorted(by),
                                notes=[lab.note for lab in by.values() if lab.note]))
    return sorted(out, key=lambda d: -abs(d.judge_score - d.label))


def _counted_draws(items: Sequence[ReviewItem], metric: str, labels: Sequence[Label],
                   labelled_keys: set[str]) -> list[list[ReviewItem]]:
    """The draws the means rest on: per seed of the labels' designs, the plan regenerated from this run's items, from
    its first draw up to the first whose items are not all labelled (or skipped). A draw is its item(s)."""
    seeds = sorted({lab.design.seed for lab in labels if lab.design is not None and lab.design.focus == "uniform"})
    out: list[list[ReviewItem]] = []
    for seed in seeds:
        orders = [o for lab in labels if lab.design is not None and lab.design.seed == seed for o in lab.design.draws]
        if not orders:
            continue
        by_order: dict[int, list[ReviewItem]] = defaultdict(list)
        for d in draw(items, metric, max(orders) + 1, seed):
            by_order[d.order].append(d.item)
        for order in sorted(by_order):
            group = by_order[order]
            if not all(it.key in labelled_keys for it in group):
                break
            out.append(group)
    return out


def _judge_only(values: np.ndarray, clusters: np.ndarray | None = None) -> PPIResult:
    ci = bootstrap_ci(values, clusters=clusters)  # the report's interval: conversations resampled whole
    return PPIResult(mean=round(float(values.mean()), 6) if values.size else None, ci_low=ci[0] if ci else None,
                     ci_high=ci[1] if ci else None, lam=1.0, n=int(values.size), trustworthy=False,
                     note="the judge's scores alone (the report's mean and bootstrap interval): its errors not counted")


def metric_spot_check(report: Report, metric: str, items: Sequence[ReviewItem],
                      labels: Sequence[Label]) -> MetricSpotCheck:
    """One metric's figures from its labels (all of them keys of `items`)."""
    by_key = latest(labels)
    people = {k: m for k, by in by_key.items() if (m := mean_label(by)) is not None}
    scored = [(s.metrics[metric].value, cluster_key(s)) for s in report.samples  # one pass: results may be on disk
              if metric in s.metrics and s.metrics[metric].value is not None]
    values = np.asarray([v for v, _ in scored], dtype=float)
    clusters = cluster_codes(np.asarray([k for _, k in scored], dtype=np.int64))
    unit: Literal["item", "sample"] = "sample" if metric in SAMPLE_UNIT else "item"
    counted = _counted_draws(items, metric, labels, set(by_key))
    usable = [g for g in counted if all(it.key in people for it in g)]
    if unit == "sample":
        y = [average_precision([people[it.key] for it in sorted(g, key=lambda i: i.chunk or 0)]) for g in usable]
        value_of = {s.id: s.metrics[metric].value for s in report.samples if metric in s.metrics}
        yhat = [float(value_of[g[0].sample_id] or 0.0) for g in usable]
    else:
        y = [people[g[0].key] for g in usable]
        yhat = [g[0].judge_score for g in usable]
    drawn_keys = {it.key for g in counted for it in g}
    ppi = ppi_mean(y, yhat, values) if values.size else PPIResult(mean=None, note="no scored sample")
    notes = [] if ppi.trustworthy else [ppi.note or "not trustworthy"]
    if not usable:
        notes = ["no label from a random draw of this run (a plan's first draw unlabelled, or labels without a "
                 "design): the means are not corrected"]
    labelled_items = [it for it in items if it.key in people]
    return MetricSpotCheck(
        metric=metric, unit=unit, population=int(values.size), items=len(items), labelled=len(people),
        draws=len(usable), skipped=sum(1 for k in by_key if k not in people),
        not_drawn=sum(1 for k in people if k not in drawn_keys),
        reviewers=sorted({lab.reviewer for lab in labels}), **_reviewer_agreement(by_key),
        item_threshold=ITEM_THRESHOLD, **_judge_vs_people(labelled_items, people),
        bias=round(float(np.mean(yhat) - np.mean(y)), 6) if usable else None,
        judge_mean=_judge_only(values, clusters), labels_mean=labels_only(y), ppi_mean=ppi,
        trustworthy=bool(usable) and ppi.trustworthy, note="; ".join(notes) or None,
        disagreeing=_disagreeing(labelled_items, people, by_key))


def spot_checks(report: Report, labels: Sequence[Label], *, files: Sequence[str | Path] = (),
                data_path: str | Path | None = None, samples: Iterable[Sample] | None = None) -> SpotChecks:
    """The report's `spot_checks` block from people's labels on its items (every reviewer's; the last line per
    reviewer and item). A label whose key is no item of this run: LabelsError naming its file and line, and how many
    matched (exit 2). The gate reading of each metric is set by the gate (run/regate.py gate_report)."""
    metrics = [m for m in reviewable(report) if any(lab.metric == m for lab in labels)]
    items = review_items(report, metrics, data_path=data_path, samples=samples) if metrics else []
    refuse_foreign(labels, {it.key for it in items})  # a metric this report lacks, or one without items, too
    block = SpotChecks(files=[str(f) for f in files], labels=len(labels), level=CI_LEVEL, minimum=MIN_LABELS,
                       design=DESIGN)
    for m in metrics:
        own = [lab for lab in labels if lab.metric == m]
        block.metrics[m] = metric_spot_check(report, m, [it for it in items if it.metric == m], own)
    return block


def with_spot_checks(report: Report, labels: Sequence[Label], *, files: Sequence[str | Path] = (),
                     data_path: str | Path | None = None, samples: Iterable[Sample] | None = None,
                     **regate_args: Any) -> Report:
    """The report with its `spot_checks` block from `labels`, gated anew: a metric with enough labelled draws is
    gated on its prediction-powered mean (or its lower bound with gate_on='lower-bound')."""
    block = spot_checks(report, labels, files=files, data_path=data_path, samples=samples)
    return regate(report.model_copy(update={"spot_checks": block}), **regate_args)


# --- before labelling: how many labels would decide the gate ----------------------------------------------------------

class PlanRow(BaseModel):
    """`review --plan` for one metric: the interval widths n labels would give, and how many labels would put the
    gate's threshold outside the prediction-powered interval, if the judge is as right as assumed."""

    metric: str
    judge_mean: float | None
    threshold: float | None
    higher_is_better: bool = True
    residual_sd: float
    widths: dict[int, float] = Field(default_factory=dict)  # labels -> expected 95% interval width
    labels_to_decide: int | None = None
    note: str | None = None


def labels_needed(mean: float, threshold: float, sd: float, z: float = 1.959964) -> int | None:
    """The labels n at which mean +- z sd / sqrt(n) leaves the threshold outside: (z sd / |mean - threshold|)^2;
    None when the mean sits on the threshold."""
    gap = abs(mean - threshold)
    return None if gap < 1e-9 else max(1, math.ceil((z * sd / gap) ** 2))


def plan(report: Report, metrics: Iterable[str] | None = None, *, thresholds: Mapping[str, float] | None = None,
         residual_sd: float = RESIDUAL_SD, sizes: Sequence[int] = (30, 50, 100)) -> list[PlanRow]:
    """For each reviewable metric of the report: the expected width of the prediction-powered interval with each of
    `sizes` labels (2 z sd / sqrt(n): the judge's own spread per label is assumed, residual_sd; the judge's mean's
    term is left out, small next to it), and the labels that would decide the gate at its threshold (the report's,
    or `thresholds`) if the people's mean were the judge's. An assumption, stated in every row."""
    limits = {**(report.meta.get("thresholds") or {}), **(thresholds or {})}
    rows = []
    for m in reviewable(report, metrics):
        s = next((x for x in report.summary if x.metric == m), None)
        mean = s.mean if s else None
        t = limits.get(m)
        row = PlanRow(metric=m, judge_mean=mean, threshold=t, residual_sd=residual_sd,
                      higher_is_better=s.higher_is_better if s else True,
                      widths={n: round(2 * 1.959964 * residual_sd / math.sqrt(n), 3) for n in sizes},
                      note=f"assumes the judge errs as on the dev split: label - judge score spreads {residual_sd} "
                           "per labelled draw, and the people's mean is near the judge's")
        if mean is not None and t is not None:
            row.labels_to_decide = labels_needed(mean, t, residual_sd)
            if row.labels_to_decide is None:
                row.note = f"{row.note}; the judge's mean is on the threshold: no number of labels decides it"
        rows.append(row)
    return rows
