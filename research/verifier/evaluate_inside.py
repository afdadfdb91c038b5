"""Leave-one-file-out evaluation of the round-2 signals (inside_signals.py): middle layers, lookback ratios, and
synthetic unsupported statements as extra training rows (issue 37).

The rule and the figures are evaluate.py's: a head for a left-out file is fitted on the other files' statements
only (FaithBench's faithfulness and context recall files are one source), the left-out file's answers are scored as
the product scores them (the mean of their statements' probabilities), against today's calibrated P(yes) on the
same rows with a paired bootstrap, and a block is kept only when it adds >= 0.03 of ROC AUC on average over the
left-out files with no file losing more than 0.02.

Blocks, in the issue's order, each fixed beforehand (no choice made on the left-out file):
P(yes) -> + the likelihood given the contexts -> + the last layer's state at the verdict position ->
+ the middle layer's (MIDDLE, the literature's choice of the middle of the stack; every layer is printed as a
diagnostic, not used to choose) -> + the lookback ratios (every head of every layer, over the statement's tokens and
at the verdict position). Each vector block is reduced by its own PCA (16 components) fitted on the training rows.

Run twice: trained on the people-labelled statements only, and with the synthetic statements of the training files
added (label 0, weight 1). Synthetic statements are never scored, and those made from the left-out file's rows are
never used to fit its head.

    .venv/bin/python -m research.verifier.evaluate_inside --signals /work/inside_out
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from localragas.judges.calibration_map import load_calibration
from research.verifier.evaluate import (CALIBRATION, MIN_ROWS, STATEMENT_FILES, _num, figures, fmt, keeps, logit,
                                        per_answer, targets)
from research.verifier.inside_signals import LAYERS, load

MIDDLE = LAYERS.index(16)
LAST = LAYERS.index(27)
SCALARS = {
    "P(yes)": lambda r: [float(logit(np.array([r["p_yes"]]))[0])],
    "+ likelihood given the contexts": lambda r: [_num(r, "lp_ctx_mean"), _num(r, "lp_ctx_p10"), _num(r, "lp_ctx_min")],
}
VECTORS = {
    "+ last layer": lambda lay, lb: lay[:, LAST, :],
    "+ middle layer (16)": lambda lay, lb: lay[:, MIDDLE, :],
    "+ lookback ratios": lambda lay, lb: lb.reshape(len(lb), -1),
}
ORDER = [*SCALARS, *VECTORS]


class Data:
    """One file's signals: records, scalar features per block, vector features per block."""

    def __init__(self, signals: Path, stem: str):
        self.recs, lay, lb = load(signals, stem)
        lay = lay.astype(np.float32)
        self.scalar = {b: np.asarray([f(r) for r in self.recs], dtype=np.float64) for b, f in SCALARS.items()}
        self.vector = {b: f(lay, lb).astype(np.float64) for b, f in VECTORS.items()}
        self.synthetic = np.asarray([r.get("synthetic") is not None for r in self.recs])

    def x(self, blocks: list[str], rows: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        s = [self.scalar[b][rows] for b in blocks if b in SCALARS]
        return np.hstack(s), [self.vector[b][rows] for b in blocks if b in VECTORS]


class Head:
    """Standardised logistic regression over the scalar features and each vector block's PCA components."""

    def __init__(self, pca: int, c: float):
        self.k, self.c = pca, c

    def _z(self, s: np.ndarray, vs: list[np.ndarray], fit: bool) -> np.ndarray:
        if fit:
            self.pcas = [PCA(n_components=self.k, random_state=0).fit(v) for v in vs]
        z = np.hstack([s, *[p.transform(v) for p, v in zip(self.pcas, vs)]])
        if fit:
            self.scaler = StandardScaler().fit(z)
        return self.scaler.transform(z)

    def fit(self, s, vs, y, w) -> "Head":
        self.lr = LogisticRegression(C=self.c, max_iter=3000).fit(self._z(s, vs, True), y, sample_weight=w)
        return self

    def predict(self, s, vs) -> np.ndarray:
        return self.lr.predict_proba(self._z(s, vs, False))[:, 1]


def lofo(data: dict[str, Data], blocks: list[str], synthetic: bool, pca: int, c: float, agg: str) -> dict:
    cal = load_calibration(CALIBRATION).families["verify_statement"]
    out = {}
    for stem, d in data.items():
        train = [t for t in data if STATEMENT_FILES[t] != STATEMENT_FILES[stem]]
        if not train:
            continue
        ss, vss, ys, ws = [], [], [], []
        for t in train:
            dt = data[t]
            rows = np.ones(len(dt.recs), bool) if synthetic else ~dt.synthetic
            s, vs = dt.x(blocks, rows)
            y, w = targets([r for r, keep in zip(dt.recs, rows) if keep])
            ss.append(s), vss.append(vs), ys.append(y), ws.append(w)
        head = Head(pca, c).fit(np.vstack(ss), [np.vstack(v) for v in zip(*vss)], np.concatenate(ys),
                                np.concatenate(ws))
        real = ~d.synthetic
        recs = [r for r, keep in zip(d.recs, real) if keep]
        new = head.predict(*d.x(blocks, real))
        today = np.asarray([cal(r["p_yes"]) for r in recs])
        _, y, base = per_answer(recs, today, agg)
        _, _, mine = per_answer(recs, new, agg)
        out[stem] = figures(y, base, mine)
    return out


def single_layer_diagnostic(data: dict[str, Data], signals: Path, pca: int, c: float) -> None:
    """P(yes) + one layer's state, every stored layer: printed, never used to choose."""
    print("\n--- diagnostic: P(yes) + each stored layer (not a selection)")
    for k, layer in enumerate(LAYERS):
        VECTORS[f"layer {layer}"] = lambda lay, lb, k=k: lay[:, k, :]
    fresh = {s: Data(signals, s) for s in data}
    for layer in LAYERS:
        res = lofo(fresh, ["P(yes)", f"layer {layer}"], False, pca, c, "mean")
        print(f"  layer {layer:2d}: " + "  ".join(f"{s} {f['auc']:.3f} ({f['gain']:+.3f})" for s, f in res.items()))


def within_file(data: dict[str, Data], pca: int, c: float) -> None:
    """5-fold cross-validation inside each file, grouped by row (a diagnostic of what a signal holds at all, not of
    transfer: within a file everything looks better than it is), P(yes) with each block alone."""
    from sklearn.model_selection import GroupKFold

    cal = load_calibration(CALIBRATION).families["verify_statement"]
    print("\n--- diagnostic: 5-fold cross-validation inside each file (people-labelled statements only)")
    for b in ORDER:
        blocks = [ORDER[0]] if b == ORDER[0] else [ORDER[0], b]
        line = []
        for stem, d in data.items():
            real = np.flatnonzero(~d.synthetic)
            recs = [d.recs[i] for i in real]
            y, w = targets(recs)
            groups = [r["row"] for r in recs]
            pred = np.zeros(len(real))
            for tr, te in GroupKFold(n_splits=5).split(real, y, groups):
                rows_tr, rows_te = np.zeros(len(d.recs), bool), np.zeros(len(d.recs), bool)
                rows_tr[real[tr]], rows_te[real[te]] = True, True
                pred[te] = Head(pca, c).fit(*d.x(blocks, rows_tr), y[tr], w[tr]).predict(*d.x(blocks, rows_te))
            today = np.asarray([cal(r["p_yes"]) for r in recs])
            _, ya, base = per_answer(recs, today)
            _, _, mine = per_answer(recs, pred)
            f = figures(ya, base, mine)
            line.append(f"{stem} {f['auc']:.3f} ({f['gain']:+.3f})")
        print(f"  {' '.join(blocks):55s} " + "  ".join(line))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signals", type=Path, required=True)
    ap.add_argument("--pca", type=int, default=16)
    ap.add_argument("--c", type=float, default=0.3)
    ap.add_argument("--agg", choices=["mean", "min"], default="mean")
    ap.add_argument("--min-rows", type=int, default=MIN_ROWS)
    ap.add_argument("--diagnostic", action="store_true", help="also P(yes) + each stored layer, one at a time")
    ap.add_argument("--within", action="store_true", help="also 5-fold cross-validation inside each file")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    data = {}
    for stem in STATEMENT_FILES:
        if (a.signals / f"{stem}.jsonl").exists():
            d = Data(a.signals, stem)
            n = len({r["row"] for r in d.recs})
            print(f"{stem}: {n} rows, {int((~d.synthetic).sum())} statements, {int(d.synthetic.sum())} synthetic")
            if n >= a.min_rows:
                data[stem] = d
    results = []
    for synthetic in (False, True):
        print(f"\n=== leave one source out; answer = {a.agg} of statements; training "
              f"{'with the synthetic statements' if synthetic else 'on people-labelled statements only'}")
        kept = [ORDER[0]]
        current = lofo(data, kept, synthetic, a.pca, a.c, a.agg)
        for stem, f in current.items():
            print(f"  {stem:28s} {fmt(f)}")
        results.append({"synthetic": synthetic, "blocks": list(kept), "kept": True, "files": current})
        for b in ORDER[1:]:
            trial = lofo(data, kept + [b], synthetic, a.pca, a.c, a.agg)
            step = {s: trial[s]["auc"] - current[s]["auc"] for s in trial}
            keep = keeps(step)
            print(f"{' '.join(kept)} {b}: step mean {np.mean(list(step.values())):+.3f}, worst "
                  f"{min(step.values()):+.3f} -> {'kept' if keep else 'left out'}")
            for stem, f in trial.items():
                print(f"  {stem:28s} {fmt(f)}  step {step[stem]:+.3f}")
            results.append({"synthetic": synthetic, "blocks": kept + [b], "kept": keep, "files": trial})
            if keep:
                kept, current = kept + [b], trial
        print(f"kept: {', '.join(kept)}")
    if a.within:
        within_file(data, a.pca, a.c)
    if a.diagnostic:
        single_layer_diagnostic(data, a.signals, a.pca, a.c)
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    sys.exit(main())
