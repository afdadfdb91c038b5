"""What drives a metric's errors on a labelled file: does a row's length or item count (claims, sentences), rather
than its label, move its score? Reads a `localragas calibrate --out` file (binary labels, per-row items) and the
labelled file it scored (for the lengths); no judge call.

    .venv/bin/python -m research.accuracy.row_factors fb_claims.json ../shared/benchmarks/faithfulness_faithbench.jsonl
    .venv/bin/python -m research.accuracy.row_factors begin_all_cal.json ../shared/benchmarks/begin_faithfulness.jsonl \
        --by meta.data_source

For each factor (the contexts' characters, the answer's characters, the items judged): Spearman's rho of the score
with the factor within each label (a factor that moves the score inside a class ranks rows by it, not by the label),
the factor's own ROC AUC for the label (does it separate the classes by itself?), and the score's ROC AUC within
the factor's lower and upper half. With --by FIELD (a row field, or meta.KEY: the source dataset, the summarizer),
the score's ROC AUC within each value of that field. Then the rows ranked most backwards: the faithful rows scored
lowest and the unfaithful rows scored highest, with their factors, so a reader can look at them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


from localragas.quality.agreement import bootstrap_statistic, roc_auc, spearman

WORST = 8  # backwards rows listed per class


def _factors(row: dict, scored: dict) -> dict[str, float]:
    return {"context chars": sum(len(c) for c in row.get("contexts") or []),
            "answer chars": len(row.get("answer") or ""),
            "items": len(scored.get("items") or [])}


def _auc(y: np.ndarray, s: np.ndarray) -> str:
    got = roc_auc(y, s)
    if got is None:
        return "n/a"
    ci, _ = bootstrap_statistic(roc_auc, [y, s])
    return f"{got:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{got:.3f}"


def _field(row: dict, path: str) -> str:
    """The value of `path` (a row field, or meta.KEY) in a labelled row, as text; "(none)" when it has none."""
    value: object = row
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "(none)" if value is None else str(value)


def _by(y: np.ndarray, s: np.ndarray, values: list[str], path: str) -> None:
    print(f"| {path} | rows | labelled 1 | score's ROC AUC [95% CI] |")
    print("|---|---:|---:|---:|")
    for value in dict.fromkeys(values):
        mask = np.array([v == value for v in values])
        print(f"| {value} | {int(mask.sum())} | {int(y[mask].sum())} | {_auc(y[mask], s[mask])} |")
    print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result", type=Path, help="a calibrate --out file")
    ap.add_argument("labelled", type=Path, help="the labelled JSONL file it scored")
    ap.add_argument("--by", action="append", default=[], metavar="FIELD",
                    help="the score's ROC AUC within each value of this row field (meta.KEY for a meta field); "
                         "repeatable")
    args = ap.parse_args(argv)
    source = {}
    for line in args.labelled.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            source[r["id"]] = r
    for result in json.loads(args.result.read_text())["results"]:
        rows = [r for r in result["per_row"] if r["score"] is not None and r["id"] in source]
        if result["kind"] != "binary" or not rows:
            continue
        y = np.array([int(r["label"]) for r in rows])
        s = np.array([float(r["score"]) for r in rows])
        f = [_factors(source[r["id"]], r) for r in rows]
        print(f"## {Path(result['file']).name}: {result['metric']} {result['metric_options']}, {len(rows)} rows, "
              f"ROC AUC {_auc(y, s)}\n")
        print("| factor | median | rho(score, factor), label 1 | rho, label 0 | factor's own ROC AUC | "
              "score's ROC AUC, factor below median | above |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in f[0]:
            x = np.array([v[name] for v in f], dtype=float)
            med = float(np.median(x))
            low, high = x <= med, x > med
            rho = [spearman(x[y == c], s[y == c]) for c in (1, 0)]
            print(f"| {name} | {med:g} | " + " | ".join("n/a" if v is None else f"{v:+.3f}" for v in rho)
                  + f" | {_auc(y, x)} | {_auc(y[low], s[low])} (n={int(low.sum())}) | "
                  f"{_auc(y[high], s[high])} (n={int(high.sum())}) |")
        print()
        for path in args.by:
            _by(y, s, [_field(source[r["id"]], path) for r in rows], path)
        print("Ranked most backwards (faithful rows scored lowest, unfaithful rows scored highest):\n")
        print("| id | label | score | items | context chars | answer chars |")
        print("|---|---:|---:|---:|---:|---:|")
        order = np.argsort(s)
        worst = [i for i in order if y[i] == 1][:WORST] + [i for i in order[::-1] if y[i] == 0][:WORST]
        for i in worst:
            print(f"| {rows[i]['id']} | {y[i]} | {s[i]:.3f} | {f[i]['items']} | {f[i]['context chars']} | "
                  f"{f[i]['answer chars']} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
