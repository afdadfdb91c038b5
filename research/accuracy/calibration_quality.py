"""How well a calibration map fitted on single-item labelled rows predicts people, checked on items it was not
fitted on; and what it does to the metric's rows. Reads `localragas calibrate --out` files (their per-row items
keep each item's raw P(yes)), scored without a calibration.

    .venv/bin/python -m research.accuracy.calibration_quality --fit-data qags_sentences.json begin_sentences.json \
        --rows qags_claims.json begin_claims.json --threshold 0.80

- **Items**: every single-item row (one sentence, one claim, one chunk) of the --fit-data files gives (raw P(yes),
  the row's label). They are cut into two folds by a hash of their source row (a QAGS summary's sentences stay
  together); a map fitted on one fold is checked on the other (cross-fitted), so every item is scored by a map that
  never saw it. Printed: ROC AUC (a monotone map keeps it), Brier score, expected calibration error (10 bins), the
  mean score against the share labelled 1, and balanced accuracy at 0.5 — raw and cross-fitted — then the map fitted
  on all the items (what `calibrate --fit` writes).
- **Rows** (--rows): the map applied to every item of each row, the row's score the mean (what the metric reports):
  ROC AUC raw / calibrated with the paired difference, and balanced accuracy at the gate (raw at 0.50, calibrated at
  --threshold). Cross-fitting does not apply here: the rows' items are other texts (the judge's claims).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

from localragas.judges.calibration_map import FamilyMap, brier, fit_logistic
from localragas.quality.agreement import balanced_accuracy, bootstrap_statistic, figure_gain, roc_auc
from research.accuracy.results import binary_results, raw_of, single_rows


def single_items(paths: list[Path]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    p, y, groups = [], [], []
    for r, row in single_rows(paths):
        p.append(raw_of(row["items"][0]))
        y.append(int(row["label"]))
        groups.append(f"{Path(r['file']).name}:{row['id'].split('#')[0]}")
    return np.array(p), np.array(y), groups


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: the item-weighted mean |mean score - share labelled 1| over equal-width bins."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(p[idx == b].mean() - y[idx == b].mean()) * (idx == b).sum() for b in range(bins)
                     if (idx == b).any()) / len(p))


def _ci(stat, *arrays) -> str:
    interval, _ = bootstrap_statistic(stat, list(arrays))
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "[n/a]"


def items_table(p: np.ndarray, y: np.ndarray, groups: list[str], threshold: float) -> FamilyMap:
    fold = np.array([int(hashlib.sha256(g.encode()).hexdigest(), 16) % 2 for g in groups])
    cal = np.empty_like(p)
    for k in (0, 1):
        a, b = fit_logistic(p[fold != k], y[fold != k])
        fitted = FamilyMap(a, b)
        cal[fold == k] = [fitted(v) for v in p[fold == k]]
    print(f"{len(p)} single items, {int(y.sum())} labelled 1 (share {y.mean():.3f}), folds of {int((fold == 0).sum())} "
          f"and {int((fold == 1).sum())} items (by source row); intervals: 95% bootstrap over items")
    print("| | raw P(yes) | calibrated (cross-fitted) |")
    print("|---|---:|---:|")
    print(f"| ROC AUC | {roc_auc(y, p):.3f} {_ci(roc_auc, y, p)} | {roc_auc(y, cal):.3f} {_ci(roc_auc, y, cal)} |")
    print(f"| Brier score (lower is better) | {brier(p, y):.3f} | {brier(cal, y):.3f} |")
    print(f"| expected calibration error | {ece(p, y):.3f} | {ece(cal, y):.3f} |")
    print(f"| mean score (share labelled 1: {y.mean():.3f}) | {p.mean():.3f} | {cal.mean():.3f} |")
    ba_raw, ba_cal = balanced_accuracy(y, p, 0.5), balanced_accuracy(y, cal, 0.5)
    print(f"| balanced accuracy at 0.5 | {ba_raw:.3f} | {ba_cal:.3f} |")
    print(f"| balanced accuracy at the gate (raw 0.50, calibrated {threshold:.2f}) | {ba_raw:.3f} | "
          f"{balanced_accuracy(y, cal, threshold):.3f} |")
    a, b = fit_logistic(p, y)
    print(f"\nfitted on all {len(p)} items: a = {a:.4f}, b = {b:.4f}; raw 0.5 -> {FamilyMap(a, b)(0.5):.3f}, "
          f"calibrated 0.5 <- raw {1 / (1 + np.exp(b / a)):.3f}")
    return FamilyMap(a, b)


def rows_table(paths: list[Path], m: FamilyMap, threshold: float) -> None:
    print(f"\n| file | rows | ROC AUC raw mean | calibrated mean | paired difference [95% CI] | bal. acc. raw @0.50 | "
          f"calibrated @{threshold:.2f} | mean raw / calibrated / share labelled 1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in binary_results(paths):
        rows = [row for row in r["per_row"] if row.get("items")]
        y = np.array([int(row["label"]) for row in rows])
        raw = np.array([np.mean([raw_of(i) for i in row["items"]]) for row in rows])
        cal = np.array([np.mean([m(raw_of(i)) for i in row["items"]]) for row in rows])
        diff = _ci(figure_gain(roc_auc), y, raw, cal)
        print(f"| {Path(r['file']).name} | {len(rows)} | {roc_auc(y, raw):.3f} | {roc_auc(y, cal):.3f} | "
              f"{roc_auc(y, cal) - roc_auc(y, raw):+.3f} {diff} | {balanced_accuracy(y, raw, 0.5):.3f} | "
              f"{balanced_accuracy(y, cal, threshold):.3f} | {raw.mean():.3f} / {cal.mean():.3f} / {y.mean():.3f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit-data", type=Path, nargs="+", required=True, help="calibrate --out files of single-item rows")
    ap.add_argument("--rows", type=Path, nargs="*", default=[], help="calibrate --out files of the metric's rows")
    ap.add_argument("--threshold", type=float, default=0.80, help="the calibrated gate threshold (default 0.80, faithfulness; context precision 0.70)")
    args = ap.parse_args(argv)
    p, y, groups = single_items(args.fit_data)
    if len(p) < 20 or y.min() == y.max():
        raise SystemExit(f"{len(p)} single items ({int(y.sum())} labelled 1): too few to fit and check")
    m = items_table(p, y, groups, args.threshold)
    if args.rows:
        rows_table(args.rows, m, args.threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
