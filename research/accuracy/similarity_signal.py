"""Would the embedder's similarity, beside the judge's P(yes), rank rows better? A second signal that costs no judge
call: for each statement a row was judged on, the highest cosine similarity (the MiniLM embedder answer relevancy
uses) between it and any sentence of the row's contexts; for a context-precision chunk, its similarity to the
question. Reads `localragas calibrate --out` files; no judge call.

    .venv/bin/python -m research.accuracy.similarity_signal begin_raw.json qags_raw.json fb_raw.json cr_cal.json \
        wikiqa_cal.json

For each binary-labelled result, over the rows scored:

- **judge**: the row's mean raw P(yes), what the metric ranks by (a monotone calibration ranks the same);
- **similarity**: the mean of its statements' highest similarity (for a chunk: chunk to question), alone;
- **both**: a logistic model on (logit of the judge's mean, mean similarity), cross-fitted: 5 folds stratified by
  label (fewer when a label has fewer rows), repeated with 5 seeds, each row scored by the mean of its 5 out-of-fold
  scores (models that never saw it). Fitted within the file, so it is the best such a combination could do there,
  not what a shipped map would;
- the paired difference both − judge with its 95% bootstrap interval (the same resampled rows).

`--all-rows FILE...` scores the similarity alone on every row of labelled faithfulness files (the answer's
sentences against the contexts' sentences, as the default splits them), by rows 1–100 and the rest: no judge
output needed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold


from localragas.judges import catalogue
from localragas.judges.calibration_map import logit
from localragas.core.sentences import sentences
from localragas.judges.embeddings import get_embedder
from localragas.quality.agreement import bootstrap_statistic, figure_gain, roc_auc
from research.accuracy.results import binary_results, labelled_file_rows, raw_of

STATEMENT_KEYS = ("claim", "statement")  # faithfulness items, context recall items
FOLDS, SEEDS = 5, 5


def best_similarities(embedder, statements: list[str], contexts: list[str]) -> np.ndarray:
    """Each statement's highest cosine similarity to a sentence of the contexts."""
    pieces = [s for c in contexts for s in sentences(c)] or list(contexts)
    vecs = embedder.embed(statements + pieces)
    return (vecs[: len(statements)] @ vecs[len(statements):].T).max(axis=1)


def row_similarity(embedder, row: dict, items: list[dict]) -> float:
    key = next((k for k in STATEMENT_KEYS if k in items[0]), None)
    if key is not None:
        return float(best_similarities(embedder, [i[key] for i in items], row["contexts"]).mean())
    if "rank" in items[0]:  # context precision: each chunk against the question
        chunks = [row["contexts"][i["rank"] - 1] for i in items]
        vecs = embedder.embed([row["question"], *chunks])
        return float((vecs[1:] @ vecs[0]).mean())
    raise SystemExit(f"row {row['id']}: items with neither a statement nor a chunk rank: {sorted(items[0])}")


def cross_fitted(x: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    folds = min(FOLDS, int(y.sum()), int(len(y) - y.sum()))
    if folds < 2:
        raise SystemExit(f"{name}: needs at least 2 rows labelled 1 and 2 labelled 0 to cross-fit")
    out = np.zeros(len(y))
    for seed in range(SEEDS):
        for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
            out[test] += LogisticRegression().fit(x[train], y[train]).decision_function(x[test]) / SEEDS
    return out


def auc_ci(y: np.ndarray, s: np.ndarray) -> str:
    ci, _ = bootstrap_statistic(roc_auc, [y, s])
    return f"{roc_auc(y, s):.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{roc_auc(y, s):.3f}"


def paired(y: np.ndarray, base: np.ndarray, new: np.ndarray) -> str:
    ci, _ = bootstrap_statistic(figure_gain(roc_auc), [y, base, new])
    diff = roc_auc(y, new) - roc_auc(y, base)
    return f"{diff:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f"{diff:+.3f}"


def results_table(embedder, paths: list[Path]) -> None:
    print("| result | file | rows | judge | similarity | both (cross-fitted) | both − judge [95% CI] |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in paths:
        for r in binary_results([path]):
            texts = {row["id"]: row for _, row in labelled_file_rows(r, "its texts")}
            rows = [row for row in r["per_row"] if row.get("items") and row.get("score") is not None]
            y = np.array([int(row["label"] >= 0.5) for row in rows])
            judge = np.array([np.mean([raw_of(i) for i in row["items"]]) for row in rows])
            sim = np.array([row_similarity(embedder, texts[row["id"]], row["items"]) for row in rows])
            both = cross_fitted(np.c_[[logit(p) for p in judge], sim], y, path.name)
            print(f"| {path.name} | {Path(r['file']).name} | {len(rows)} | {auc_ci(y, judge)} | {auc_ci(y, sim)} | "
                  f"{auc_ci(y, both)} | {paired(y, judge, both)} |", flush=True)


def all_rows_table(embedder, paths: list[Path]) -> None:
    print("| file | rows | similarity alone: rows 1–100 | the rest | all |")
    print("|---|---:|---:|---:|---:|")
    for path in paths:
        rows = [row for _, row in labelled_file_rows({"file": path}, "its texts")]
        y = np.array([int(row["label"]["value"] >= 0.5) for row in rows])
        sim = np.array([float(best_similarities(embedder, sentences(row["answer"]) or [row["answer"]],
                                                row["contexts"]).mean()) for row in rows])
        rest = auc_ci(y[100:], sim[100:]) if len(rows) > 100 else "—"
        print(f"| {path.name} | {len(rows)} | {auc_ci(y[:100], sim[:100])} | {rest} | {auc_ci(y, sim)} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, nargs="*", help="`localragas calibrate --out` files")
    ap.add_argument("--all-rows", type=Path, nargs="+", default=[], metavar="FILE",
                    help="labelled faithfulness .jsonl files: the similarity alone on every row")
    ap.add_argument("--embedder", default=catalogue.DEFAULT_EMBEDDER,
                    help="catalogue name, 'fake' or a sentence-transformers folder (default %(default)s)")
    args = ap.parse_args(argv)
    if not args.results and not args.all_rows:
        ap.error("give calibrate --out files, --all-rows files, or both")
    embedder = get_embedder(args.embedder)
    if args.results:
        results_table(embedder, args.results)
    if args.all_rows:
        all_rows_table(embedder, args.all_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
