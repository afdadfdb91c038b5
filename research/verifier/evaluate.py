"""Leave-one-file-out evaluation of a verifier head on the signals of research/verifier/signals.py (issue 37).

For each left-out benchmark file, a head is fitted on the statements of the other files (FaithBench's two files,
faithfulness and context recall, are one source: neither trains the other's head), and the left-out file's answers
are scored as the product scores them: the mean of their statements' probabilities. Today's figure on the same
rows is the shipped calibration of P(yes), averaged the same way. Printed per file and block of signals: ROC AUC
with a 95% bootstrap interval, and the paired difference against today's with its interval.

Statement targets: a statement's own label where people gave one (QAGS's per-sentence votes, a one-statement
answer); else the answer's label when it is 1 (every statement supported); a statement of an unsupported
many-statement answer is a 0 weighted 1/n (some of them are unsupported, which is not known).

Context precision (one file of single chunks) has no other file of its family: its head is judged by 5-fold
cross-validation grouped by question, said so in the output.

    .venv/bin/python research/verifier/evaluate.py --signals research/verifier/out [--json results.json]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.preprocessing import StandardScaler

from localragas.calibration_map import load_calibration
from localragas.quality.agreement import balanced_accuracy, bootstrap_statistic, figure_gain, roc_auc

CALIBRATION = Path(__file__).resolve().parents[2] / "localragas" / "calibrations" / "qwen2.5-1.5b.json"
STATEMENT_FILES = {"begin_faithfulness": "begin", "qags_faithfulness": "qags", "faithfulness_faithbench": "faithbench",
                   "context_recall_faithbench": "faithbench"}
CHUNK_FILES = {"context_precision_wikiqa": "wikiqa"}
EPS = 1e-6


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, EPS, 1 - EPS)
    return np.log(p / (1 - p))


def scalar_features(r: dict) -> dict[str, float]:
    """Block 1: likelihood with and without the contexts, and lexical overlap (NaN-safe)."""
    def num(k: str, default: float = 0.0) -> float:
        v = r.get(k)
        return default if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
    return {
        "lp_ctx_mean": num("lp_ctx_mean"), "lp_ctx_min": num("lp_ctx_min"), "lp_ctx_p10": num("lp_ctx_p10"),
        "lp_noctx_mean": num("lp_noctx_mean"), "lp_noctx_min": num("lp_noctx_min"),
        "lp_gain_mean": num("lp_ctx_mean") - num("lp_noctx_mean"),
        "lp_gain_p10": num("lp_ctx_p10") - num("lp_noctx_p10"),
        "uni_prec": num("uni_prec", 1.0), "bi_prec": num("bi_prec", 1.0),
        "log_words": math.log1p(num("n_words")), "log_n": math.log(max(1.0, num("n", 1.0))),
    }


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


def design(recs: list[dict], hidden: np.ndarray, block: int) -> np.ndarray:
    """The features of a block: 0 = logit P(yes); 1 = + likelihood and lexical; 2 = + hidden state (raw, reduced
    by the head's PCA)."""
    x = [[float(logit(np.array([r["p_yes"]]))[0])] for r in recs]
    if block >= 1:
        x = [a + list(scalar_features(r).values()) for a, r in zip(x, recs)]
    x = np.asarray(x, dtype=np.float64)
    return np.hstack([x, hidden]) if block >= 2 else x


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


def statement_lofo(data: dict, block: int, pca: int, c: float, agg: str) -> dict:
    cal = load_calibration(CALIBRATION).families["verify_statement"]
    out = {}
    for stem, (recs, hidden) in data.items():
        group = STATEMENT_FILES[stem]
        train = [s for s in data if STATEMENT_FILES[s] != group]
        if not train:
            continue
        xt = np.vstack([design(data[s][0], data[s][1], block) for s in train])
        yt, wt = map(np.concatenate, zip(*[targets(data[s][0]) for s in train]))
        head = Head(1 if block == 0 else 12, pca, c).fit(xt, yt, wt)
        new = head.predict(design(recs, hidden, block))
        today = np.asarray([cal(r["p_yes"]) for r in recs])
        _, y, base = per_answer(recs, today, agg)
        _, _, mine = per_answer(recs, new, agg)
        out[stem] = figures(y, base, mine)
    return out


def chunk_cv(data: dict, block: int, pca: int, c: float) -> dict:
    cal = load_calibration(CALIBRATION).families["judge_chunk"]
    out = {}
    for stem, (recs, hidden) in data.items():
        x = design(recs, hidden, block)
        y = np.asarray([int(r["label"]) for r in recs])
        groups = [r["row"].rsplit("-", 2)[0] for r in recs]  # the question's id (WikiQA Q<n>)
        pred = np.zeros(len(recs))
        for tr, te in GroupKFold(n_splits=5).split(x, y, groups):
            pred[te] = Head(1 if block == 0 else 12, pca, c).fit(x[tr], y[tr], np.ones(len(tr))).predict(x[te])
        base = np.asarray([cal(r["p_yes"]) for r in recs])
        f = figures(y, base, pred)
        f["ba_gate_today"] = balanced_accuracy(y, base, 0.70)
        f["ba_gate"] = balanced_accuracy(y, pred, 0.70)
        f["ba_half"] = balanced_accuracy(y, pred, 0.50)
        out[stem] = f
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signals", type=Path, default=Path("research/verifier/out"))
    ap.add_argument("--pca", type=int, default=16)
    ap.add_argument("--c", type=float, default=0.3)
    ap.add_argument("--agg", choices=["mean", "min"], default="mean")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    stmt = {s: d for s in STATEMENT_FILES if (d := load(a.signals, s))}
    chunk = {s: d for s in CHUNK_FILES if (d := load(a.signals, s))}
    results: dict = {}
    for block, name in enumerate(["P(yes)", "+ likelihood, lexical", "+ hidden state"]):
        print(f"\n== block {block}: {name} (statements: leave one source out; answer = {a.agg} of statements)")
        r = statement_lofo(stmt, block, a.pca, a.c, a.agg)
        for stem, f in r.items():
            print(f"  {stem:28s} {fmt(f)}")
        if r:
            gains = [f["gain"] for f in r.values()]
            print(f"  mean gain {np.mean(gains):+.3f}, worst {min(gains):+.3f}")
        rc = chunk_cv(chunk, block, a.pca, a.c)
        for stem, f in rc.items():
            print(f"  {stem:28s} {fmt(f)}  BA@0.70 {f['ba_gate']:.3f} (today {f['ba_gate_today']:.3f}), "
                  f"BA@0.50 {f['ba_half']:.3f}  [5-fold by question]")
        results[name] = {**r, **rc}
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    sys.exit(main())
