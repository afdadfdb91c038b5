"""Per-statement signals of the default judge on the benchmarks' dev split, for the learned verifier (issue 37).

For each statement (an answer sentence for faithfulness, a reference sentence for context recall, a chunk for
context precision) the judge is asked exactly the graded prompt the product asks (prompts.verify_statement /
prompts.judge_chunk, rendered by the judge's chat template and cut into steps by judges/llama_steps.py), and from
that one pass this script reads:

- p_yes: the product's graded verdict (judges/yes_no.py on the next-token logits);
- hidden: the judge's last hidden state at the verdict position (llama.cpp's per-token embedding, final norm);
- the statement's own tokens' log-probabilities inside that prompt, i.e. given the contexts (mean, min, 10th
  percentile, count);

and from a second, short pass of the statement's words alone (after a fixed "Text:" lead, no instructions, no
context) the same token statistics without the contexts: their difference is the conditional PMI. Lexical
overlap with the contexts is computed in Python (no judge).

Output, per benchmark file: OUT/<stem>.jsonl, one line per statement (ids and numbers only, no benchmark text), and
OUT/<stem>.hidden.npy (float16, one row per line of the jsonl, same order). Resumable: rows already in the jsonl
are skipped (the .npy is rewritten from a .part file at the end of each row).

    .venv/bin/python -m research.verifier.signals --bench ../shared/benchmarks --out research/verifier/out \
        --files begin_faithfulness.jsonl qags_faithfulness.jsonl
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from localragas.judges import catalogue
from localragas.core.sentences import sentences
from localragas.judges.llama_steps import LlamaSteps
from localragas.judges.yes_no import p_yes, top_from_logits, word_of
from localragas.prompts.relevance import judge_chunk
from localragas.prompts.verdicts import verify_statement

KINDS = {  # file stem prefix -> how its statements are made
    "begin_faithfulness": "answer", "qags_faithfulness": "answer", "faithfulness_faithbench": "answer",
    "context_recall_faithbench": "reference", "context_precision_wikiqa": "chunk",
}
WORD = re.compile(r"\w+", re.UNICODE)


def lexical(statement: str, contexts: list[str]) -> dict[str, float]:
    """Overlap of the statement with the contexts: unigram and bigram precision (ROUGE-1/2 precision)."""
    s = [w.lower() for w in WORD.findall(statement)]
    c = [w.lower() for w in WORD.findall(" ".join(contexts))]
    cu, cb = set(c), set(zip(c, c[1:]))
    sb = list(zip(s, s[1:]))
    return {"uni_prec": sum(w in cu for w in s) / len(s) if s else 1.0,
            "bi_prec": sum(b in cb for b in sb) / len(sb) if sb else 1.0,
            "n_words": float(len(s))}


class Reader:
    """The judge loaded once, with all logits and per-token hidden states."""

    def __init__(self, model_path: Path, n_ctx: int):
        import llama_cpp

        self.lib = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=os.cpu_count() or 1, seed=42,
                                   embedding=True, verbose=False)
        self.steps = LlamaSteps(self.llm, llama_cpp)
        self.n_embd = self.llm.n_embd()
        self.prefix: tuple[int, ...] = ()
        self.item_hook = None  # called with True just before the item is evaluated, False after (inside_signals.py)

    def _decode_text(self, i: int) -> str:
        return self.llm.detokenize([i]).decode("utf-8", "replace")

    def alone(self, target: str) -> list[float]:
        """The log-probabilities of `target`'s tokens read with no context and no instructions: after a fixed
        two-token lead ("Text:"), nothing else (the judge's prior for the words)."""
        lead = self.llm.tokenize(b"Text:\n", add_bos=False, special=False)
        toks = self.llm.tokenize(target.strip().encode("utf-8"), add_bos=False, special=False)[:400]
        self.prefix = ()
        self.llm.n_tokens = 0
        self.llm.eval(lead + toks)
        n_vocab = self.llm.n_vocab()
        out = []
        for k in range(len(lead), len(lead) + len(toks)):
            row = np.ctypeslib.as_array(self.lib.llama_get_logits_ith(self.llm._ctx.ctx, k - 1),
                                        shape=(n_vocab,)).astype(np.float64)
            row = row - row.max()
            out.append(float(row[toks[k - len(lead)]] - math.log(np.exp(row).sum())))
        return out

    def ask(self, prompt, target: str) -> dict:
        """Evaluate `prompt` (the shared prefix kept when it is the one in the context); read P(yes), the hidden
        state at the last token and the log-probabilities of `target`'s tokens inside the item."""
        segs = self.steps.segments(prompt)
        if segs is None or len(segs) < 2:
            raise RuntimeError("prompt could not be cut into prefix + item")
        prefix, item = tuple(t for seg in segs[:-1] for t in seg), segs[-1]
        if self.prefix != prefix or self.llm.n_tokens < len(prefix):
            self.lib.llama_set_embeddings(self.llm._ctx.ctx, False)  # the prefix: only its last token's logits
            self.llm.n_tokens = 0
            self.llm.eval(list(prefix))
            self.lib.llama_set_embeddings(self.llm._ctx.ctx, True)
            self.prefix = prefix
        self.llm.n_tokens = len(prefix)
        if len(item) > self.llm.n_batch:
            raise RuntimeError(f"an item of {len(item)} tokens: more than one batch")
        if self.item_hook:
            self.item_hook(True)
        self.llm.eval(list(item))  # one batch: every token is an output (embeddings on), its logits readable
        if self.item_hook:
            self.item_hook(False)
        n_vocab = self.llm.n_vocab()

        def logits(k: int) -> np.ndarray:
            return np.ctypeslib.as_array(self.lib.llama_get_logits_ith(self.llm._ctx.ctx, k), shape=(n_vocab,))

        last = logits(len(item) - 1)
        top = top_from_logits(last, self._decode_text)
        mass = sum(math.exp(lp) for t, lp in top if word_of(t) is not None)  # P(yes) + P(no) among the top tokens
        p = {"p_yes": p_yes(top, prompt.name), "mass": round(min(mass, 1.0), 6)}
        emb = self.lib.llama_get_embeddings_ith(self.llm._ctx.ctx, -1)
        hidden = np.ctypeslib.as_array(emb, shape=(self.n_embd,)).astype(np.float16).copy()
        # the target's tokens: find its bytes in the item's text
        pieces = [self.llm.detokenize([t], special=True) for t in item]
        text = b"".join(pieces)
        tb = target.strip().encode("utf-8")
        at = text.find(tb[:200]) if tb else -1
        lps: list[float] = []
        ks: list[int] = []  # the target's token indices in the item
        if at >= 0:
            end, pos = at + len(tb), 0
            for k, piece in enumerate(pieces):
                start = pos
                pos += len(piece)
                if k == 0 or pos <= at or start >= end:
                    continue
                row = logits(k - 1).astype(np.float64)
                row = row - row.max()
                lps.append(float(row[item[k]] - math.log(np.exp(row).sum())))
                ks.append(k)
        return {"p_yes": p["p_yes"], "mass": p["mass"], "hidden": hidden, "lps": lps, "ks": ks,
                "item_tokens": len(item), "prefix_tokens": len(prefix), "head_tokens": len(segs[0])}


def stats(lps: list[float], tag: str) -> dict[str, float]:
    if not lps:
        return {f"{tag}_mean": float("nan"), f"{tag}_min": float("nan"), f"{tag}_p10": float("nan"),
                f"{tag}_n": 0.0}
    a = np.asarray(lps)
    return {f"{tag}_mean": float(a.mean()), f"{tag}_min": float(a.min()), f"{tag}_p10": float(np.percentile(a, 10)),
            f"{tag}_n": float(len(a))}


def items_of(kind: str, row: dict) -> tuple[list[str], callable]:
    """The statements of a row and how to build the graded prompt for one of them (with contexts or with none)."""
    if kind == "chunk":
        q = row["question"]
        return list(row["contexts"]), lambda s, ctx: judge_chunk(q if ctx else "", "", "question", s)
    text = row["answer"] if kind == "answer" else row["reference"]
    # QAGS keeps the summary's sentences as its workers voted on them: those, so each has its own label
    parts = row.get("meta", {}).get("summary_sentences") if kind == "answer" else None
    return parts or sentences(text or ""), lambda s, ctx: verify_statement(s, row["contexts"] if ctx else [])


def statement_labels(row: dict, n: int) -> list[int | None]:
    """A label per statement where people gave one (QAGS: >= 2 of 3 'yes'; a one-item row: the row's label)."""
    votes = row.get("meta", {}).get("sentence_yes_votes_of_3")
    if votes and len(votes) == n:
        return [int(v >= 2) for v in votes]
    return [int(row["label"]["value"])] if n == 1 else [None] * n


def run_file(reader: Reader, path: Path, out: Path, limit: int | None) -> None:
    kind = next(v for k, v in KINDS.items() if path.stem.startswith(k))
    lines_path = out / f"{path.stem}.jsonl"
    hid_path = out / f"{path.stem}.hidden.npy"
    done_ids: set[str] = set()
    hidden: list[np.ndarray] = []
    if lines_path.exists():
        done_ids = {json.loads(x)["row"] for x in lines_path.read_text().splitlines() if x.strip()}
        if hid_path.exists():
            hidden = list(np.load(hid_path))
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()][:limit]
    started = time.time()
    for n, row in enumerate(rows, 1):
        if row["id"] in done_ids:
            continue
        t0 = time.time()
        items, make = items_of(kind, row)
        recs, hs = [], []
        s_labels = statement_labels(row, len(items))
        for i, s in enumerate(items):
            with_ctx = reader.ask(make(s, True), s)
            recs.append({"row": row["id"], "i": i, "n": len(items), "label": row["label"]["value"],
                         "s_label": s_labels[i],
                         "p_yes": with_ctx["p_yes"], "mass": with_ctx["mass"],
                         "prefix_tokens": with_ctx["prefix_tokens"], "item_tokens": with_ctx["item_tokens"],
                         **stats(with_ctx["lps"], "lp_ctx"),
                         **lexical(s, [row["question"]] if kind == "chunk" else row["contexts"]),
                         "chars": len(s)})
            hs.append(with_ctx["hidden"])
        for rec, s in zip(recs, items):  # the same words read alone
            rec.update(stats(reader.alone(s), "lp_noctx"))
        secs = time.time() - t0
        for rec in recs:
            rec["row_seconds"] = round(secs, 2)
        with lines_path.open("a") as f:
            for rec in recs:
                f.write(json.dumps(rec) + "\n")
        hidden.extend(hs)
        np.save(hid_path.with_suffix(".part.npy"), np.asarray(hidden, dtype=np.float16).reshape(-1, reader.n_embd))
        os.replace(hid_path.with_suffix(".part.npy"), hid_path)
        print(f"{path.stem} {n}/{len(rows)} {len(items)} items {secs:.1f}s (total {time.time() - started:.0f}s)",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--out", type=Path, default=Path("research/verifier/out"))
    ap.add_argument("--files", nargs="+", default=[f"{k}.jsonl" for k in KINDS])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--n-ctx", type=int, default=8192)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    path = catalogue.models_dir() / catalogue.spec(catalogue.DEFAULT_JUDGE).filename
    reader = Reader(path, a.n_ctx)
    for name in a.files:
        run_file(reader, a.bench / name, a.out, a.limit)


if __name__ == "__main__":
    sys.exit(main())
