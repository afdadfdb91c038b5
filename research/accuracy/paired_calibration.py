"""Paired difference of two `localragas calibrate --out` runs on the same labelled rows: which method agrees with
people better, and is the difference larger than the noise?

    .venv/bin/python -m research.accuracy.paired_calibration BASE.json NEW.json

For each (file, metric) present in both, the rows scored in both runs are paired by id; the figure (ROC AUC for
binary labels, Spearman for graded ones) is computed for each run on those rows, and a paired bootstrap (the same
resampled rows for both) gives the 95% interval of NEW - BASE. An interval that excludes 0 is a real difference.
Pairwise labels (two answers to one question, one preferred) are paired by pair: the figure is the share of pairs
ordered as people did (a tie counts one half), over the pairs whose two answers both runs scored, and the bootstrap
resamples pairs.

--by-id pairs two runs that scored the same rows under other names (a built-in metric against a custom criterion,
from files whose label.metric differs): each run must hold one result, its rows paired by id.

--mean compares BASE with the mean of both runs' scores on each row (two ways of asking combined, e.g. two wordings
of a question): NEW is then that mean.

--at THRESHOLD adds, for binary labels, balanced accuracy with a row predicted good when its score >= THRESHOLD (the
gate's threshold), paired the same way.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


from localragas.quality.agreement import (
    balanced_accuracy, bootstrap_statistic, figure_gain, pair_outcomes, roc_auc, spearman)

FIGURES = {"binary": ("ROC AUC", roc_auc), "graded": ("Spearman", spearman),
           "pairwise": ("pairs ordered", lambda _, outcomes: float(outcomes.mean()))}


def _rows(result: dict) -> dict[str, tuple[float, float]]:
    return {r["id"]: (r["label"], r["score"]) for r in result["per_row"] if r.get("score") is not None}


def _pairs(result: dict) -> dict[str, tuple[float, float]]:
    """pair -> (preferred answer's score, the other's) for the pairs with both answers scored."""
    members: dict[str, dict[bool, float]] = {}
    for r in result["per_row"]:
        if r.get("score") is not None and r.get("pair") is not None:
            members.setdefault(str(r["pair"]), {})[bool(r["better"])] = r["score"]
    return {p: (m[True], m[False]) for p, m in members.items() if len(m) == 2}


def _columns(base: dict, new: dict, kind: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(paired units, labels, base column, new column): rows by id, or for pairwise labels pairs by pair, with the
    label column unused (zeros) and each column the pair's outcome (1 ordered as people did, 0.5 a tie, 0 not)."""
    if kind == "pairwise":
        a, b = _pairs(base), _pairs(new)
        ids = sorted(set(a) & set(b))
        sa, sb = (pair_outcomes([run[i][0] for i in ids], [run[i][1] for i in ids]) for run in (a, b))
        return len(ids), np.zeros(len(ids)), sa, sb
    a, b = _rows(base), _rows(new)
    ids = sorted(set(a) & set(b))
    return (len(ids), np.array([a[i][0] for i in ids]), np.array([a[i][1] for i in ids]),
            np.array([b[i][1] for i in ids]))


def paired(base: dict, new: dict, mean: bool = False, at: float | None = None) -> dict | None:
    """The paired comparison of two calibration results of one file and metric (mean: of base with the mean of the
    two runs' scores; at: balanced accuracy at that threshold instead of the kind's figure, binary labels only); None
    for a kind of labels it does not know."""
    if base["kind"] not in FIGURES or (at is not None and base["kind"] != "binary"):
        return None
    name, figure = FIGURES[base["kind"]]
    if at is not None:
        name, figure = f"balanced accuracy at {at:g}", lambda y, s: balanced_accuracy(y, s, at)
    if mean and base["kind"] == "pairwise":
        raise SystemExit("--mean: pairwise labels compare pair outcomes, which have no mean of two runs' scores")
    n, y, sa, sb = _columns(base, new, base["kind"])
    if mean:
        sb = (sa + sb) / 2
    interval, note = bootstrap_statistic(figure_gain(figure), [y, sa, sb])
    fa, fb = (figure(y, s) if n else None for s in (sa, sb))
    files = " / ".join(dict.fromkeys(Path(r["file"]).name for r in (base, new)))  # one name when they agree
    metrics = " / ".join(dict.fromkeys(r["metric"] for r in (base, new)))
    return {"file": files, "metric": metrics, "figure": name, "rows": n,
            "base": fa, "new": fb, "difference": None if fa is None or fb is None else fb - fa,
            "interval": interval, "note": note}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--by-id", action="store_true", help="pair the one result of each run by row id alone")
    parser.add_argument("--mean", action="store_true", help="compare BASE with the mean of both runs' scores per row")
    parser.add_argument("--at", type=float, metavar="THRESHOLD",
                        help="binary labels: also balanced accuracy at this threshold (the gate's), paired")
    args = parser.parse_args(argv)
    runs = [json.loads(path.read_text())["results"] for path in (args.base, args.new)]
    if args.by_id:
        if any(len(results) != 1 for results in runs):
            parser.error("--by-id: each run must hold exactly one result (one file, one metric)")
        base, new = ({("by id", "by id"): results[0]} for results in runs)
    else:
        base, new = ({(Path(r["file"]).name, r["metric"]): r for r in results} for results in runs)
    print("| file | metric | figure | paired rows | base | new | new - base [95% CI] |")
    print("|---|---|---|---:|---:|---:|---|")
    figures = [None] if args.at is None else [None, args.at]  # None: the kind's own figure
    for key, at in ((k, t) for k in sorted(set(base) & set(new)) for t in figures):
        p = paired(base[key], new[key], args.mean, at)
        if p is None:
            continue
        ci = f"[{p['interval'][0]:+.3f}, {p['interval'][1]:+.3f}]" if p["interval"] else f"({p['note']})"
        fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
        d = "—" if p["difference"] is None else f"{p['difference']:+.3f}"
        print(f"| {p['file']} | {p['metric']} | {p['figure']} | {p['rows']} | {fmt(p['base'])} | {fmt(p['new'])} | "
              f"{d} {ci} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
