"""Per-statement signals from inside the judge's pass, with synthetic unsupported statements (issue 37, round 2).

The same graded pass as signals.py (the product's `verify_statement` prompt, prefix reused per row), with llama.cpp's
eval callback (inside.py) reading, for each statement:

- everything signals.py reads from that pass (p_yes, the statement's log-probabilities given the contexts, the last
  hidden state): the scalar blocks, so synthetic rows carry them too;
- the residual stream at the verdict position after layers LAYERS (middle layers; the last one too);
- the lookback ratio of every head of every layer (Lookback Lens, Chuang et al. 2024): for a token, the mean
  attention on the contexts' tokens over that mean plus the mean attention on the item's tokens up to it; averaged
  over the statement's tokens, and read at the verdict position;

and, for each row with a statement people judged supported, one synthetic unsupported edit of its longest such
statement (synthetic.py), asked the same way and marked `synthetic` (training only, never scored).

Output per benchmark file: OUT/<stem>.jsonl (a line per statement, ids and numbers only), OUT/<stem>.layers.f16
(raw float16, len(LAYERS) x n_embd per line), OUT/<stem>.lookback.f32 (raw float32, 2 x n_layer x n_head per line:
statement tokens, verdict position). Resumable: a row already in the jsonl is skipped; the raw files are cut to
the jsonl's length first.

    .venv/bin/python -m research.verifier.inside_signals --bench ../shared/benchmarks --out /tmp/inside \
        --files qags_faithfulness.jsonl faithfulness_faithbench.jsonl begin_faithfulness.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from localragas.judges import catalogue
from research.verifier.inside import Inside
from research.verifier.signals import KINDS, Reader, items_of, lexical, statement_labels, stats
from research.verifier.synthetic import perturb

LAYERS = (4, 8, 12, 16, 20, 24, 27)
N_LAYER = 28  # the default judge (qwen2.5-1.5b)


def lookback(att: dict[int, np.ndarray], head: int, prefix: int, ks: list[int]) -> np.ndarray:
    """[2, n_layer, n_head]: the lookback ratio averaged over the item tokens `ks`, and at the item's last token."""
    out = []
    for layer in sorted(att):
        a = att[layer]  # [n_head, n_item, n_kv]
        ctx = a[:, :, head:prefix].mean(-1)  # [n_head, n_item]
        n_item = a.shape[1]
        cum = np.cumsum(a[:, :, prefix:prefix + n_item], axis=-1)  # attention on item cells up to each cell
        j = np.arange(n_item)
        new = cum[:, j, j] / (j + 1)  # mean over the item's cells up to and including the token itself
        ratio = ctx / (ctx + new + 1e-12)
        rows = [k for k in ks if k < n_item] or [n_item - 1]
        out.append(np.stack([ratio[:, rows].mean(-1), ratio[:, -1]]))
    return np.stack(out, axis=1).astype(np.float32)  # [2, n_layer, n_head]


def run_file(reader: Reader, inside: Inside, path: Path, out: Path, limit: int | None = None) -> None:
    kind = next(v for k, v in KINDS.items() if path.stem.startswith(k))
    lines_path, lay_path, lb_path = (out / f"{path.stem}{s}" for s in (".jsonl", ".layers.f16", ".lookback.f32"))
    n_layer, n_head = int(reader.llm.metadata["qwen2.block_count"]), int(reader.llm.metadata["qwen2.attention.head_count"])
    lay_row, lb_row = len(LAYERS) * reader.n_embd * 2, 2 * n_layer * n_head * 4
    done = [json.loads(x) for x in lines_path.read_text().splitlines()] if lines_path.exists() else []
    for p, size in ((lay_path, lay_row), (lb_path, lb_row)):
        with p.open("ab") as f:
            f.truncate(len(done) * size)
    done_ids = {r["row"] for r in done}
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()][:limit]
    started = time.time()
    for n, row in enumerate(rows, 1):
        if row["id"] in done_ids:
            continue
        t0 = time.time()
        items, make = items_of(kind, row)
        labels = statement_labels(row, len(items))
        asks = [(s, labels[i], None) for i, s in enumerate(items)]
        supported = [s for s, lab in zip(items, labels) if lab == 1 or (lab is None and row["label"]["value"] == 1)]
        if supported and kind != "chunk":
            edit = perturb(max(supported, key=len), row["contexts"])
            if edit is not None:
                asks.append((edit[0], 0, edit[1]))
        recs, lays, lbs = [], [], []
        for i, (s, s_label, rule) in enumerate(asks):
            inside.clear()
            got = reader.ask(make(s, True), s)
            recs.append({"row": row["id"], "i": i, "n": len(items), "label": row["label"]["value"], "s_label": s_label,
                         "synthetic": rule, "p_yes": got["p_yes"], "mass": got["mass"],
                         "prefix_tokens": got["prefix_tokens"], "item_tokens": got["item_tokens"],
                         **stats(got["lps"], "lp_ctx"),
                         **lexical(s, [row["question"]] if kind == "chunk" else row["contexts"]), "chars": len(s)})
            lays.append(np.stack([inside.layers[k][-1] for k in LAYERS]).astype(np.float16))
            lbs.append(lookback(inside.attention, got["head_tokens"], got["prefix_tokens"], got["ks"]))
        secs = time.time() - t0
        for rec in recs:
            rec["row_seconds"] = round(secs, 2)
        with lay_path.open("ab") as f:
            f.write(b"".join(a.tobytes() for a in lays))
        with lb_path.open("ab") as f:
            f.write(b"".join(a.tobytes() for a in lbs))
        with lines_path.open("a") as f:
            f.writelines(json.dumps(rec) + "\n" for rec in recs)
        print(f"{path.stem} {n}/{len(rows)} {len(asks)} items {secs:.1f}s (total {time.time() - started:.0f}s)",
              flush=True)


def load(out: Path, stem: str) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """A file's records, layers [n, len(LAYERS), n_embd] and lookback ratios [n, 2, n_layer, n_head]."""
    recs = [json.loads(x) for x in (out / f"{stem}.jsonl").read_text().splitlines()]
    lay = np.fromfile(out / f"{stem}.layers.f16", dtype=np.float16).reshape(len(recs), len(LAYERS), -1)
    lb = np.fromfile(out / f"{stem}.lookback.f32", dtype=np.float32).reshape(len(recs), 2, N_LAYER, -1)
    return recs, lay, lb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--files", nargs="+", required=True)
    ap.add_argument("--limit", type=int, default=None, help="the first N rows of each file (resumable: raise it later)")
    ap.add_argument("--n-ctx", type=int, default=8192)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    path = catalogue.models_dir() / catalogue.spec(catalogue.DEFAULT_JUDGE).filename
    reader = Reader(path, a.n_ctx)
    inside = Inside(reader.llm)
    reader.item_hook = lambda on: setattr(inside, "on", on)  # the item's pass only, not the prefix's
    for name in a.files:
        run_file(reader, inside, a.bench / name, a.out, a.limit)


if __name__ == "__main__":
    sys.exit(main())
