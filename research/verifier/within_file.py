"""Each signal alone, and heads cross-validated inside one file (5 folds of answers), for contrast with the
leave-one-source-out figures of evaluate.py: what a file rewards, and how much better a head looks when it is fitted
on rows of the same file.

    .venv/bin/python -m research.verifier.within_file begin_faithfulness qags_faithfulness
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

from localragas.quality.agreement import roc_auc
from research.verifier.evaluate import BLOCKS, HIDDEN, Head, design, load, per_answer, targets


def main(stems: list[str], signals: Path = Path("research/verifier/out")) -> None:
    for stem in stems:
        recs, hidden = load(signals, stem)
        rows = sorted({r["row"] for r in recs})
        print(f"== {stem}: {len(rows)} answers, {len(recs)} statements")
        for _, feats in BLOCKS:
            for name, f in feats:
                _, y, s = per_answer(recs, np.asarray([f(r) for r in recs]))
                print(f"  {name:14s} alone (mean of statements): ROC AUC {roc_auc(y, s):.3f}")
        label = {r["row"]: r["label"] for r in recs}
        rid = np.array([r["row"] for r in recs])
        for blocks in ([0], [0, 1], [0, 1, 2, 3], [0, 1, HIDDEN]):
            x, n_scalar = design(recs, hidden, blocks)
            y, w = targets(recs)
            pred = np.zeros(len(recs))
            folds = StratifiedKFold(5, shuffle=True, random_state=0).split(rows, [label[r] for r in rows])
            for train_rows, _ in folds:
                train = np.isin(rid, np.asarray(rows)[train_rows])
                pred[~train] = Head(n_scalar, 16, 0.3).fit(x[train], y[train], w[train]).predict(x[~train])
            _, yy, s = per_answer(recs, pred)
            names = " ".join(BLOCKS[b][0] for b in blocks)
            print(f"  5-fold inside the file, {names}: ROC AUC {roc_auc(yy, s):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
