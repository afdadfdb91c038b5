"""Fit the calibration of `localragas generate`'s answerability check (prompt family question_answerable: "do the
contexts state the answer to the question?") on rows people labelled, and add it to a calibration file.

    .venv/bin/python scripts/fit_answerable.py ../shared/benchmarks/context_precision_wikiqa.jsonl \
        --judge qwen2.5-1.5b --cache-dir cache --into localragas/calibrations/qwen2.5-1.5b.json

Each row is a question, its contexts and a binary label (1: the contexts answer the question), e.g. WikiQA's
single-chunk rows, where crowd workers marked whether a Wikipedia sentence answers the question. The judge is asked
question_answerable per row (through the judge cache) for its raw P(yes); a logistic map on logit P(yes) is fitted
(calibration_map.fit_logistic, as `calibrate --fit` fits the metrics' families) and written into --into as the family
question_answerable, with the prompt's template hash and what it was fitted on, the file's other families kept.
Printed: ROC AUC of the raw P(yes) with its interval, and balanced accuracy at 0.5 raw and cross-fitted (two folds by
row: each row scored by a map fitted on the other fold), so the map's effect is measured on rows it did not see.
--per-row FILE also writes each row's raw P(yes) in `localragas calibrate --out`'s layout (one result, metric
question_answerable), for scripts/paired_calibration.py.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from localragas.quality.agreement import balanced_accuracy, bootstrap_statistic, roc_auc  # noqa: E402
from localragas.asking.generation import ANSWERABLE_FAMILY, answerable, asking  # noqa: E402
from localragas.calibration_map import CalibrationMap, FamilyMap, fit_logistic, load_calibration  # noqa: E402
from localragas.judges import get_judge  # noqa: E402
from localragas.core.key_values import parse_options  # noqa: E402
from localragas.data.language import detect  # noqa: E402
from localragas.prompts.overrides import template_hashes  # noqa: E402
from localragas.run.runner import judge_cache  # noqa: E402


def _rows(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        label = (r.get("label") or {}).get("value")
        if label not in (0, 1) or not r.get("question") or not r.get("contexts"):
            raise SystemExit(f"{path}:{n}: a row needs question, contexts and a binary label.value (0 or 1)")
        rows.append(r)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labelled", type=Path)
    ap.add_argument("--judge", default=None)
    ap.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--into", type=Path, required=True, help="the calibration file the family is added to")
    ap.add_argument("--source", default=None, help="what the rows are, recorded in fitted_on (default: the file name)")
    ap.add_argument("--per-row", type=Path, default=None, metavar="FILE",
                    help="also write each row's raw P(yes) as a calibrate --out file (for paired_calibration.py)")
    args = ap.parse_args(argv)
    rows = _rows(args.labelled)
    options = {**parse_options(args.judge_option, "--judge-option"), "calibration": "none"}  # raw P(yes)
    judge = get_judge(args.judge, options)
    p = []
    with judge_cache(judge, True, args.cache_dir):
        for i, r in enumerate(rows, 1):
            p.append(answerable(asking(judge, detect(r["question"])), r["question"], r["contexts"]))
            print(f"\r{i}/{len(rows)} rows", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    judge.close()
    y = np.array([int(r["label"]["value"]) for r in rows])
    raw = np.array(p)
    folds = np.arange(len(rows)) % 2
    cross = np.empty_like(raw)
    for f in (0, 1):
        m = FamilyMap(*fit_logistic(raw[folds != f].tolist(), y[folds != f].tolist()))
        cross[folds == f] = [m(v) for v in raw[folds == f]]
    auc_ci, _ = bootstrap_statistic(roc_auc, [y, raw])
    print(f"{args.labelled.name}: {len(rows)} rows, {int(y.sum())} labelled 1")
    print(f"ROC AUC of the raw P(yes): {roc_auc(y, raw):.3f} [{auc_ci[0]:.3f}, {auc_ci[1]:.3f}]")
    print(f"balanced accuracy at 0.5: raw {balanced_accuracy(y, raw, 0.5):.3f}, "
          f"cross-fitted {balanced_accuracy(y, cross, 0.5):.3f}; mean score raw {raw.mean():.3f}, cross-fitted "
          f"{cross.mean():.3f}, share labelled 1 {y.mean():.3f}")
    a, b = fit_logistic(raw.tolist(), y.tolist())
    fitted_on = {"items": len(rows), "positives": int(y.sum()), "source": args.source or args.labelled.name}
    family = FamilyMap(a, b, fitted_on, template_hashes([ANSWERABLE_FAMILY]))
    current = load_calibration(args.into) if args.into.exists() else CalibrationMap({})
    CalibrationMap({**current.families, ANSWERABLE_FAMILY: family}, current.judge or judge.describe(),
                   current.created).write(args.into)
    print(f"{ANSWERABLE_FAMILY}: a={a:.3f} b={b:.3f}, written into {args.into}")
    if args.per_row:
        per_row = [{"id": r["id"], "label": int(v), "score": round(float(s), 6)} for r, v, s in zip(rows, y, raw)]
        result = {"file": str(args.labelled), "metric": ANSWERABLE_FAMILY, "kind": "binary", "per_row": per_row}
        args.per_row.write_text(json.dumps({"results": [result]}, indent=1), encoding="utf-8")
        print(f"per-row raw P(yes) written to {args.per_row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
