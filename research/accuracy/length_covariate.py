"""Would a calibration that also knows how long the contexts are rank rows better? A small judge's P(yes) falls with
the length of the contexts whatever the label (docs/accuracy.md, "Why FaithBench sits near chance"), so a map
sigmoid(a * logit(p) + c * ln(context characters) + b) could take that out where the plain map
sigmoid(a * logit(p) + b) cannot. Reads `localragas calibrate --out` files scored without a calibration; no judge
call.

    .venv/bin/python -m research.accuracy.length_covariate --fit-data qags_sent.json --rows begin_raw.json
    .venv/bin/python -m research.accuracy.length_covariate --fit-data begin_rows.json --rows qags_raw.json

- **Fit**: every single-item row of the --fit-data files (one sentence: QAGS summary sentences made by
  statement_rows.py, single-sentence BEGIN responses) gives (raw P(yes), the length of its row's contexts, its
  label); both maps are fitted on them by maximum likelihood (scikit-learn's LogisticRegression, no penalty to speak
  of: C = 1e6).
- **Rows**: each map applied to every item of each row of the --rows files, the row's score the mean of its items
  (what faithfulness reports): ROC AUC with the plain map and with the length term, and their paired difference with
  its 95% bootstrap interval (the same resampled rows). Fit on one file and check on another: a map checked on the
  rows it was fitted on says nothing about a user's data.

A row's contexts are read from the labelled file its result names (`file`), by row id.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression


from localragas.judges.calibration_map import logit
from localragas.quality.agreement import bootstrap_statistic, figure_gain, roc_auc
from research.accuracy.results import binary_results, labelled_file_rows, raw_of, single_rows


def context_lengths(result: dict) -> dict[str, float]:
    """ln(characters of the contexts) of each row of the labelled file `result` was scored on, by id."""
    return {row["id"]: math.log(max(1, sum(len(c) for c in row.get("contexts") or [])))
            for _, row in labelled_file_rows(result, "its contexts")}


def features(p: list[float], length: float) -> np.ndarray:
    return np.array([[logit(x), length] for x in p])


def fit_items(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    x, y, lengths = [], [], {}
    for r, row in single_rows(paths):
        if r["file"] not in lengths:
            lengths[r["file"]] = context_lengths(r)
        x.append(features([raw_of(row["items"][0])], lengths[r["file"]][row["id"]])[0])
        y.append(int(row["label"]))
    if len(set(y)) < 2:
        raise SystemExit("--fit-data: need single-item rows labelled 0 and 1")
    return np.array(x), np.array(y)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit-data", type=Path, nargs="+", required=True)
    ap.add_argument("--rows", type=Path, nargs="+", required=True)
    args = ap.parse_args(argv)
    x, y = fit_items(args.fit_data)
    plain = LogisticRegression(C=1e6).fit(x[:, :1], y)
    with_length = LogisticRegression(C=1e6).fit(x, y)
    a, c = with_length.coef_[0]
    print(f"fitted on {len(y)} items ({int(y.sum())} labelled 1): plain a={plain.coef_[0][0]:.3f} "
          f"b={plain.intercept_[0]:.3f}; with length a={a:.3f} c={c:.3f} b={with_length.intercept_[0]:.3f}")
    print("| rows file | rows | plain map | with the length term | difference [95% CI] |")
    print("|---|---:|---:|---:|---:|")
    for r in binary_results(args.rows):
        lengths = context_lengths(r)
        rows = [row for row in r["per_row"] if row.get("items")]
        labels = np.array([int(row["label"]) for row in rows])
        feats = [features([raw_of(i) for i in row["items"]], lengths[row["id"]]) for row in rows]
        s0 = np.array([plain.predict_proba(f[:, :1])[:, 1].mean() for f in feats])
        s1 = np.array([with_length.predict_proba(f)[:, 1].mean() for f in feats])
        ci, _ = bootstrap_statistic(figure_gain(roc_auc), [labels, s0, s1])
        diff = roc_auc(labels, s1) - roc_auc(labels, s0)
        shown = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "[n/a]"
        print(f"| {Path(r['file']).name} | {len(rows)} | {roc_auc(labels, s0):.3f} | {roc_auc(labels, s1):.3f} | "
              f"{diff:+.3f} {shown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
