"""Per-chunk agreement on a ranked context-precision file: each chunk's calibrated P(relevant) from a
`localragas calibrate -m context_precision --out` run, against the chunk's own label in the labelled row's
`meta.relevance` (one 0/1 per chunk, in the order of `contexts`). The graded label of a ranked row (average precision
over the list) mixes every chunk of a list into one number; this asks the question the single-chunk file asks,
on every chunk of every list. No judge call.

    .venv/bin/python -m research.accuracy.ranked_chunks ranked_cal.json --threshold 0.70

ROC AUC and balanced accuracy at --threshold (the gate's, calibrated) and at the best threshold, each with a 95%
bootstrap interval that resamples whole lists (the chunks of one list are not independent of each other).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


from localragas.quality.agreement import balanced_accuracy, best_balanced_accuracy, roc_auc
from localragas.run.stats import percentile_interval, resample_rows
from research.accuracy.results import labelled_file_rows


def chunk_labels(result: dict) -> dict[str, list[int]]:
    """meta.relevance of each row of the labelled file `result` was scored on, by id; exits naming the line without
    one."""
    out = {}
    for n, row in labelled_file_rows(result, "meta.relevance"):
        relevance = (row.get("meta") or {}).get("relevance")
        if not isinstance(relevance, list) or len(relevance) != len(row.get("contexts") or []):
            raise SystemExit(f"{result['file']}:{n}: meta.relevance must hold one 0/1 per chunk of contexts")
        out[row["id"]] = [int(x) for x in relevance]
    return out


def chunks(result: dict) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(labels, scores, the chunk indices of each list) over the scored rows."""
    labels = chunk_labels(result)
    y, s, lists = [], [], []
    for row in result["per_row"]:
        if row.get("score") is None or not row.get("items"):
            continue
        first = len(y)
        for item in row["items"]:
            y.append(labels[row["id"]][item["rank"] - 1])
            s.append(item["p_relevant"])
        lists.append(np.arange(first, len(y)))
    return np.array(y), np.array(s), lists


def by_lists(stat, y: np.ndarray, s: np.ndarray, lists: list[np.ndarray]) -> str:
    value = stat(y, s)
    draws = []
    for chunk in resample_rows(len(lists)):
        for pick in chunk:
            idx = np.concatenate([lists[k] for k in pick])
            v = stat(y[idx], s[idx])
            if v is not None:
                draws.append(v)
    low, high = percentile_interval(np.array(draws))
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, nargs="+", help="`localragas calibrate -m context_precision --out` files")
    ap.add_argument("--threshold", type=float, default=0.70, help="the gate's threshold (default %(default)s)")
    args = ap.parse_args(argv)
    print(f"| result | file | lists | chunks (relevant) | ROC AUC | balanced accuracy @ {args.threshold:g} | "
          "balanced accuracy @ best |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in args.results:
        for r in json.loads(path.read_text())["results"]:
            if r["metric"] != "context_precision":
                continue
            y, s, lists = chunks(r)
            print(f"| {path.name} | {Path(r['file']).name} | {len(lists)} | {len(y)} ({int(y.sum())}) | "
                  f"{by_lists(roc_auc, y, s, lists)} | "
                  f"{by_lists(lambda a, b: balanced_accuracy(a, b, args.threshold), y, s, lists)} | "
                  f"{by_lists(best_balanced_accuracy, y, s, lists)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
