"""Spot checks measured on labelled benchmark rows: how often each way of reading a metric's mean covers people's share.

    .venv/bin/python -m research.spot_checks --calibration-out DIR [--reps 2000] [--sizes 30,50,100] [--seed 0]

Reads every `localragas calibrate --out` JSON file in DIR (or the files given): each binary-labelled result's rows
(one benchmark row = one sample with one score, its label the row's). The people's share is the mean of the rows'
labels. For each n of --sizes, --reps repetitions (seeded) draw n rows at random with replacement, as `localragas
review` draws, and measure:
- coverage of the people's share by (a) the judge-only 95% interval a report prints (the percentile bootstrap of the
  scores' mean over every row: it uses no label, so it covers in every repetition or in none), (b) the prediction-
  powered PPI++ interval (localragas.quality.ppi), (c) the labels-only interval; and the mean width of each;
- the gate's decision at the shipped threshold (the result's gate_threshold): how often each method's mean is on the
  other side of the threshold from the people's share;
- a threshold fitted on the n labels (Youden's J, localragas.quality.agreement.best_threshold): its balanced accuracy
  on the rows not labelled, against the shipped threshold's on the same rows.
Prints one Markdown table.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from localragas.quality.agreement import balanced_accuracy, best_threshold
from localragas.quality.ppi import labels_only, ppi_mean
from localragas.run.stats import bootstrap_ci


@dataclass
class Rows:
    """A result's scored, labelled rows."""

    name: str
    labels: np.ndarray
    scores: np.ndarray
    threshold: float


def read_rows(paths: list[Path]) -> list[Rows]:
    """The binary-labelled results of the files with their scored rows (unscored rows left out)."""
    out = []
    for path in paths:
        for r in json.loads(path.read_text())["results"]:
            if r.get("kind") != "binary":
                continue
            rows = [row for row in r["per_row"] if row.get("score") is not None]
            threshold = (r.get("agreement") or {}).get("gate_threshold")
            if not rows or threshold is None:
                continue
            out.append(Rows(name=f"{Path(r['file']).name} {r['metric']}", threshold=float(threshold),
                            labels=np.asarray([float(row["label"]) for row in rows]),
                            scores=np.asarray([float(row["score"]) for row in rows])))
    return out


def measure(rows: Rows, n: int, reps: int, seed: int) -> dict[str, float]:
    """The figures of one result at n labels over `reps` repetitions."""
    rng = np.random.default_rng([seed, n])
    y, s, t = rows.labels, rows.scores, rows.threshold
    share = float(y.mean())
    big_n = y.size
    low, high = bootstrap_ci(s)
    judge_mean = float(s.mean())
    cover = {"judge": 0.0, "ppi": 0.0, "labels": 0.0}
    width = {"judge": high - low, "ppi": 0.0, "labels": 0.0}
    wrong = {"judge": float((judge_mean >= t) != (share >= t)), "ppi": 0.0, "labels": 0.0}
    cover["judge"] = float(low <= share <= high)
    fitted_ba, shipped_ba, counted = 0.0, 0.0, 0
    for _ in range(reps):
        idx = rng.integers(0, big_n, n)
        for key, got in (("ppi", ppi_mean(y[idx], s[idx], s)), ("labels", labels_only(y[idx]))):
            assert got.mean is not None and got.ci_low is not None and got.ci_high is not None
            cover[key] += got.ci_low <= share <= got.ci_high
            width[key] += got.ci_high - got.ci_low
            wrong[key] += (got.mean >= t) != (share >= t)
        rest = np.ones(big_n, dtype=bool)
        rest[idx] = False
        fit = best_threshold(y[idx], s[idx])
        a = balanced_accuracy(y[rest], s[rest], fit[0]) if fit else None
        b = balanced_accuracy(y[rest], s[rest], t)
        if a is not None and b is not None:
            fitted_ba += a
            shipped_ba += b
            counted += 1
    out = {f"cover_{k}": cover[k] / (1 if k == "judge" else reps) for k in cover}
    out |= {f"width_{k}": width[k] / (1 if k == "judge" else reps) for k in width}
    out |= {f"wrong_{k}": wrong[k] / (1 if k == "judge" else reps) for k in wrong}
    out |= {"fitted_ba": fitted_ba / counted if counted else float("nan"),
            "shipped_ba": shipped_ba / counted if counted else float("nan"), "share": share, "judge_mean": judge_mean,
            "rows": big_n, "threshold": t}
    return out


HEADER = ("| result | rows | people's share | judge mean | threshold | n | coverage judge / PPI / labels | "
          "width judge / PPI / labels | wrong side judge / PPI / labels | bal. acc. fitted / shipped |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def table(results: list[Rows], sizes: list[int], reps: int, seed: int) -> str:
    lines = [HEADER]
    for rows in results:
        for n in sizes:
            m = measure(rows, n, reps, seed)
            lines.append(
                f"| {rows.name} | {m['rows']} | {m['share']:.3f} | {m['judge_mean']:.3f} | {m['threshold']:.2f} | {n} | "
                f"{m['cover_judge']:.0%} / {m['cover_ppi']:.1%} / {m['cover_labels']:.1%} | "
                f"{m['width_judge']:.3f} / {m['width_ppi']:.3f} / {m['width_labels']:.3f} | "
                f"{m['wrong_judge']:.0%} / {m['wrong_ppi']:.1%} / {m['wrong_labels']:.1%} | "
                f"{m['fitted_ba']:.3f} / {m['shipped_ba']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calibration-out", nargs="+", type=Path, required=True,
                   help="a folder of `localragas calibrate --out` JSON files, or the files")
    p.add_argument("--reps", type=int, default=2000, help="repetitions per file and label count (default 2000)")
    p.add_argument("--sizes", default="30,50,100", help="label counts, comma-separated (default 30,50,100)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    paths = sorted(f for x in args.calibration_out for f in (x.glob("*.json") if x.is_dir() else [x]))
    results = read_rows(paths)
    if not results:
        raise SystemExit(f"no binary-labelled result with scored rows and a gate threshold in {args.calibration_out}")
    print(table(results, [int(x) for x in args.sizes.split(",")], args.reps, args.seed))


if __name__ == "__main__":
    main()
