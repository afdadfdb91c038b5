"""How a row's items (claims) are combined into its score, compared on binary labels: the mean (faithfulness: the
share of claims supported), the minimum, the product ("every claim is supported", for independent claims) and a
soft minimum. Reads `localragas calibrate --out` files whose per-row items keep each item's raw P(yes); no judge call.

    .venv/bin/python -m research.accuracy.claim_aggregation qags_claims.json begin_claims.json [--map A,B]

--map A,B applies a calibration map (c = sigmoid(A * logit(p) + B), `calibrate --fit`) to each item first: the mean
changes its ranking under a non-linear map, the minimum does not. For each file: ROC AUC of each aggregation with
its 95% bootstrap interval, and its paired difference to the mean (the same resampled rows).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np


from localragas.quality.agreement import bootstrap_statistic, figure_gain, roc_auc
from localragas.judges.calibration_map import FamilyMap
from research.accuracy.results import raw_of

SOFT_MIN_K = 5.0  # -log(mean(exp(-k p))) / k: between the mean (k -> 0) and the minimum (k -> infinity)


def soft_min(p: list[float], k: float = SOFT_MIN_K) -> float:
    return -math.log(sum(math.exp(-k * x) for x in p) / len(p)) / k


AGGREGATIONS = {
    "mean": lambda p: sum(p) / len(p),
    "min": min,
    "product": math.prod,
    f"soft-min (k={SOFT_MIN_K:g})": soft_min,
}


def _interval(stat, *arrays) -> str:
    got, _ = bootstrap_statistic(stat, list(arrays))
    return f"[{got[0]:+.3f}, {got[1]:+.3f}]" if got else "[n/a]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--map", default=None, metavar="A,B", help="a calibration map applied to each item first")
    args = ap.parse_args(argv)
    m = FamilyMap(*map(float, args.map.split(","))) if args.map else (lambda p: p)
    print("| file | rows | items per row | aggregation | ROC AUC [95% CI] | minus the mean [95% CI] |")
    print("|---|---:|---:|---|---:|---:|")
    for path in args.files:
        for r in json.loads(path.read_text())["results"]:
            rows = [row for row in r["per_row"] if r["kind"] == "binary" and row.get("items")]
            if not rows:
                continue
            y = np.array([int(row["label"]) for row in rows])
            items = [[m(raw_of(i)) for i in row["items"]] for row in rows]
            scores = {name: np.array([agg(p) for p in items]) for name, agg in AGGREGATIONS.items()}
            base = scores["mean"]
            per_row = np.mean([len(p) for p in items])
            for name, s in scores.items():
                ci = _interval(roc_auc, y, s).replace("+", "")
                diff = "" if name == "mean" else (
                    f"{roc_auc(y, s) - roc_auc(y, base):+.3f} "
                    + _interval(figure_gain(roc_auc), y, base, s))
                print(f"| {Path(r['file']).name} | {len(rows)} | {per_row:.1f} | {name} | {roc_auc(y, s):.3f} {ci} | "
                      f"{diff} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
