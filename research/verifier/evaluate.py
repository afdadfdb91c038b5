"""Leave-one-file-out evaluation of a verifier head on the signals of research/verifier/signals.py (issue 37).

For each left-out benchmark file, a head is fitted on the statements of the other files (FaithBench's two files,
faithfulness and context recall, are one source: neither trains the other's head), and the left-out file's answers
are scored as the product scores them: the mean of their statements' probabilities. Today's figure on the same
rows is the shipped calibration of P(yes), averaged the same way. The blocks of signals (BLOCKS) are added one at a
time and a block is kept only when it adds at least 0.03 of ROC AUC on average over the left-out files and costs no
file more than 0.02 (`keeps`). Printed per file and step: ROC AUC with a 95% bootstrap interval, the paired
difference against today's with its interval, and the step's change.

Statement targets: a statement's own label where people gave one (QAGS's per-sentence votes, a one-statement
answer); else the answer's label when it is 1 (every statement supported); a statement of an unsupported
many-statement answer is a 0 weighted 1/n (some of them are unsupported, which is not known).

Context precision (one file of single chunks) has no other file of its family: its head is judged by 5-fold
cross-validation grouped by question, said so in the output.

    .venv/bin/python -m research.verifier.evaluate --signals research/verifier/out [--json results.json]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.preprocessing import StandardScaler

from localragas.judges.calibration_map import load_calibration
from localragas.quality.agreement import balanced_accuracy, bootstrap_statistic, figure_gain, roc_auc

CALIBRATION = Path(__file__).resolve().parents[2] / "localragas" / "calibrations" / "qwen2.5-1.5b.json"
STATEMENT_FILES = {"begin_faithfulness": "begin", "qags_faithfulness": "qags", "faithfulness_faithbench": "faithbench",
                   "context_recall_faithbench": "faithbench"}
CHUNK_FILES = {"context_precision_wikiqa": "wikiqa"}
EPS = 1e-6


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, EPS, 1 - EPS)
    return np.log(p / (1 - p))


def _num(r: dict, k: str, default: float = 0.0) -> float:
    v = r.get(k)
    return default if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


# The blocks of signals, added one at a time in this order (the order of the literature the issue cites: the judge's
# verdict, then BARTScore's likelihood of the statement given the source, then the same without the source and their
# difference (conditional PMI), then lexical overlap, then the hidden state). Each is a list of (name, feature).
BLOCKS: list[tuple[str, list[tuple[str, Callable[[dict], float]]]]] = [
    ("P(yes)", [("logit_p_yes", lambda r: float(logit(np.array([r["p_yes"]]))[0]))]),
    ("+ likelihood given the contexts", [
        ("lp_ctx_mean", lambda r: _num(r, "lp_ctx_mean")), ("lp_ctx_p10", lambda r: _num(r, "lp_ctx_p10")),
        ("lp_ctx_min", lambda r: _num(r, "lp_ctx_min"))]),
    ("+ likelihood alone, PMI", [
        ("lp_noctx_mean", lambda r: _num(r, "lp_noctx_mean")), ("lp_noctx_p10", lambda r: _num(r, "lp_noctx_p10")),
        ("lp_gain_mean", lambda r: _num(r, "lp_ctx_mean") - _num(r, "lp_noctx_mean")),
        ("lp_gain_p10", lambda r: _num(r, "lp_ctx_p10") - _num(r, "lp_noctx_p10"))]),
    ("+ lexical overlap, length", [
        ("uni_prec", lambda r: _num(r, "uni_prec", 1.0)), ("bi_prec", lambda r: _num(r, "bi_prec", 1.0)),
        ("log_words", lambda r: math.log1p(_num(r, "n_words"))),
        ("log_n", lambda r: math.log(max(1.0, _num(r, "n", 1.0))))]),
    ("+ hidden state", []),  # the judge's last hidden state, reduced by the head's PCA
]
HIDDEN = len(BLOCKS) - 1


def load(signals: Path, stem: str) -> tuple[list[dict], np.ndarray] | None:
    path = signals / f"{stem}.jsonl"
    if not path.exists():
        return None
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    hidden = np.load(signals / f"{stem}.hidden.npy").astype(np.float32)
    if len(hidden) != len(recs):
        n = min(len(hidden), len(recs))
        recs, hidden = recs[:n], hidden[:n]
    return recs, hidden


def design(recs: list[dict], hidden: np.ndarray, blocks: Sequence[int]) -> tuple[np.ndarray, int]:
    """The features of the chosen blocks (indices into BLOCKS), the scalar ones first, then the raw hidden state
    when its block is chosen; and how many scalar columns there are."""
    feats = [f for b in blocks for _, f in BLOCKS[b][1]]
    x = np.asarray([[f(r) for f in feats] for r in recs], dtype=np.float64).reshape(len(recs), len(feats))
    return (np.hstack([x, hidden]) if HIDDEN in blocks else x), len(feats)


def targets(recs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    y, w = [], []
    for r in recs:
        if r.get("s_label") is not None:
            y.append(int(r["s_label"])), w.append(1.0)
        elif int(r["label"]) == 1:
            y.append(1), w.append(1.0)
        else:
            y.append(0), w.append(1.0 / max(1, r["n"]))
    return np.asarray(y), np.asarray(w)


class Head:
    """Standardised logistic regression; the hidden state (columns past n_scalar) reduced by PCA first."""

    def __init__(self, n_scalar: int, pca: int, c: float):
        self.n_scalar, self.k, self.c = n_scalar, pca, c

    def _x(self, x: np.ndarray, fit: bool) -> np.ndarray:
        s, h = x[:, :self.n_scalar], x[:, self.n_scalar:]
        if h.shape[1]:
            if fit:
                self.pca = PCA(n_components=self.k, random_state=0).fit(h)
            s = np.hstack([s, self.pca.transform(h)])
        if fit:
            self.scaler = StandardScaler().fit(s)
        return self.scaler.transform(s)

    def fit(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> "Head":
        self.lr = LogisticRegression(C=self.c, max_iter=2000).fit(self._x(x, True), y, sample_weight=w)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.lr.predict_proba(self._x(x, False))[:, 1]


def per_answer(recs: list[dict], values: np.ndarray, how: str = "mean") -> tuple[list[str], np.ndarray, np.ndarray]:
    rows: dict[str, list[float]] = {}
    label: dict[str, int] = {}
    for r, v in zip(recs, values):
        rows.setdefault(r["row"], []).append(float(v))
        label[r["row"]] = int(r["label"])
    ids = list(rows)
    agg = np.mean if how == "mean" else np.min
    return ids, np.asarray([label[i] for i in ids]), np.asarray([agg(rows[i]) for i in ids])


def figures(y: np.ndarray, base: np.ndarray, new: np.ndarray) -> dict:
    ci_new, _ = bootstrap_statistic(roc_auc, [y, new])
    gain, _ = bootstrap_statistic(figure_gain(roc_auc), [y, base, new])
    return {"rows": int(len(y)), "auc_today": roc_auc(y, base), "auc": roc_auc(y, new), "auc_ci": ci_new,
            "gain": roc_auc(y, new) - roc_auc(y, base), "gain_ci": gain}


def fmt(f: dict) -> str:
    ci = f"[{f['auc_ci'][0]:.3f}, {f['auc_ci'][1]:.3f}]" if f["auc_ci"] else ""
    g = f"[{f['gain_ci'][0]:+.3f}, {f['gain_ci'][1]:+.3f}]" if f["gain_ci"] else ""
    return f"{f['auc']:.3f} {ci}  today {f['auc_today']:.3f}  gain {f['gain']:+.3f} {g}"


def statement_lofo(data: dict, blocks: Sequence[int], pca: int, c: float, agg: str) -> dict:
    cal = load_calibration(CALIBRATION).families["verify_statement"]
    out = {}
    for stem, (recs, hidden) in data.items():
        group = STATEMENT_FILES[stem]
        train = [s for s in data if STATEMENT_FILES[s] != group]
        if not train:
            continue
        xt = np.vstack([design(data[s][0], data[s][1], blocks)[0] for s in train])
        yt, wt = map(np.concatenate, zip(*[targets(data[s][0]) for s in train]))
        x, n_scalar = design(recs, hidden, blocks)
        new = Head(n_scalar, pca, c).fit(xt, yt, wt).predict(x)
        today = np.asarray([cal(r["p_yes"]) for r in recs])
        _, y, base = per_answer(recs, today, agg)
        _, _, mine = per_answer(recs, new, agg)
        out[stem] = figures(y, base, mine)
    return out


def chunk_cv(data: dict, blocks: Sequence[int], pca: int, c: float) -> dict:
    cal = load_calibration(CALIBRATION).families["judge_chunk"]
    out = {}
    for stem, (recs, hidden) in data.items():
        x, n_scalar = design(recs, hidden, blocks)
        y = np.asarray([int(r["label"]) for r in recs])
        groups = [r["row"].rsplit("-", 2)[0] for r in recs]  # the question's id (WikiQA Q<n>)
        pred = np.zeros(len(recs))
        for tr, te in GroupKFold(n_splits=5).split(x, y, groups):
            pred[te] = Head(n_scalar, pca, c).fit(x[tr], y[tr], np.ones(len(tr))).predict(x[te])
        base = np.asarray([cal(r["p_yes"]) for r in recs])
        f = figures(y, base, pred)
        f["ba_gate_today"] = balanced_accuracy(y, base, 0.70)
        f["ba_gate"] = balanced_accuracy(y, pred, 0.70)
        f["ba_half"] = balanced_accuracy(y, pred, 0.50)
        out[stem] = f
    return out


MIN_MEAN_GAIN, MAX_LOSS = 0.03, 0.02  # the rule for keeping a block
MIN_ROWS = 50  # answers a file needs to be scored


def keeps(step: dict[str, float]) -> bool:
    """A block is kept when it adds at least MIN_MEAN_GAIN of ROC AUC on average over the left-out files and costs no
    file more than MAX_LOSS."""
    return bool(step) and np.mean(list(step.values())) >= MIN_MEAN_GAIN and min(step.values()) >= -MAX_LOSS


def chunk_line(f: dict) -> str:
    if "ba_gate" not in f:
        return ""
    return f"  BA@0.70 {f['ba_gate']:.3f} (today {f['ba_gate_today']:.3f}), BA@0.50 {f['ba_half']:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signals", type=Path, default=Path("research/verifier/out"))
    ap.add_argument("--pca", type=int, default=16)
    ap.add_argument("--c", type=float, default=0.3)
    ap.add_argument("--agg", choices=["mean", "min"], default="mean")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    def enough(d) -> bool:  # a file still being extracted is left out until it has MIN_ROWS answers
        return d is not None and len({r["row"] for r in d[0]}) >= MIN_ROWS
    stmt = {s: d for s in STATEMENT_FILES if enough(d := load(a.signals, s))}
    chunk = {s: d for s in CHUNK_FILES if enough(d := load(a.signals, s))}
    results: dict = {"statements": [], "chunks": []}
    for family, data, score in (("statements", stmt, lambda bl: statement_lofo(stmt, bl, a.pca, a.c, a.agg)),
                                ("chunks", chunk, lambda bl: chunk_cv(chunk, bl, a.pca, a.c))):
        if not data:
            continue
        how = ("leave one source out; answer = " + a.agg + " of statements" if family == "statements"
               else "5-fold cross-validation by question: one file of single chunks")
        print(f"\n=== {family} ({how})")
        kept, current = [0], score([0])
        print(f"{BLOCKS[0][0]}:")
        for stem, f in current.items():
            print(f"  {stem:28s} {fmt(f)}{chunk_line(f)}")
        results[family].append({"blocks": [BLOCKS[0][0]], "kept": True, "files": current})
        for b in range(1, len(BLOCKS)):
            trial = score(kept + [b])
            step = {s: trial[s]["auc"] - current[s]["auc"] for s in trial}
            keep = keeps(step)
            print(f"{' '.join(BLOCKS[k][0] for k in kept)} {BLOCKS[b][0]}: step mean {np.mean(list(step.values())):+.3f}, "
                  f"worst {min(step.values()):+.3f} -> {'kept' if keep else 'left out'}")
            for stem, f in trial.items():
                print(f"  {stem:28s} {fmt(f)}  step {step[stem]:+.3f}{chunk_line(f)}")
            results[family].append({"blocks": [BLOCKS[k][0] for k in kept + [b]], "kept": keep, "files": trial})
            if keep:
                kept, current = kept + [b], trial
        print(f"kept: {', '.join(BLOCKS[k][0] for k in kept)}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    sys.exit(main())
