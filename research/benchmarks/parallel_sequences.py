"""Issue 50, lever 2, measured first: how fast does llama.cpp generate N sequences at once from one shared prefix on
this CPU? (Decoding one token is bound by reading the weights, so a batch of N tokens, one per sequence, may cost about
as much as one.)

    python -m research.benchmarks.parallel_sequences [--model PATH] [--steps 32] [--prefix-tokens 400] [--repeat 3]

For N = 1, 2, 3, 4: a prefix (the default judge's chat template around a made-up passage of about --prefix-tokens
tokens) is evaluated once on sequence 0 and copied to sequences 1..N-1 (llama_memory_seq_cp: the KV cells are shared,
not evaluated again); then --steps decoding steps, each one llama_decode of a batch of N tokens (one per sequence,
each sequence's own greedy next token, no grammar). Prints per N: the seconds per step (median over --repeat rounds),
generated tokens per second over all sequences, and the speed-up over N = 1. Nothing else may run on the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

PASSAGE = ("The Standard storage tier costs $0.02 per GB per month and has no minimum storage duration. Objects in the "
           "Archive tier are restored within 12 hours; an expedited restore takes one hour and costs extra. Versioning "
           "keeps every version of an object until a lifecycle rule removes it. ")


def _default_model() -> Path:
    from localragas.judges import catalogue  # noqa: PLC0415

    return Path(catalogue.path("qwen2.5-1.5b"))


def measure(model: Path, steps: int, prefix_tokens: int, repeat: int, sizes: list[int]) -> list[dict]:
    import llama_cpp as lc  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    threads = os.cpu_count() or 1
    llm = lc.Llama(model_path=str(model), n_ctx=4096, n_threads=threads, verbose=False, logits_all=False)
    params = lc.llama_context_default_params()
    params.n_ctx = 4096
    params.n_batch = 512
    params.n_ubatch = 512
    params.n_seq_max = max(sizes)
    params.n_threads = threads
    params.n_threads_batch = threads
    ctx = lc.llama_init_from_model(llm._model.model, params)
    if not ctx:
        raise SystemExit("llama_init_from_model failed")
    mem = lc.llama_get_memory(ctx)
    n_vocab = llm.n_vocab()
    text = PASSAGE * max(1, prefix_tokens // len(llm.tokenize(PASSAGE.encode(), add_bos=False)))
    messages = [{"role": "system", "content": "You write questions a passage answers."},
                {"role": "user", "content": f"Passage:\n{text}\nWrite three questions it answers, as JSON."}]
    prompt = llm.tokenize(_render(llm, messages).encode("utf-8"), add_bos=False, special=True)
    batch = lc.llama_batch_init(max(len(prompt), max(sizes)), 0, max(sizes))
    results = []
    try:
        for n in sizes:
            rounds = []
            for _ in range(repeat):
                lc.llama_memory_clear(mem, True)
                _fill(batch, [(t, i, [0], i == len(prompt) - 1) for i, t in enumerate(prompt)])
                if lc.llama_decode(ctx, batch) != 0:
                    raise SystemExit("prefix decode failed")
                for s in range(1, n):
                    lc.llama_memory_seq_cp(mem, 0, s, -1, -1)
                first = _argmax(lc, ctx, len(prompt) - 1, n_vocab, np)
                tokens = [first] * n
                pos = len(prompt)
                started = time.perf_counter()
                for _step in range(steps):
                    _fill(batch, [(tokens[s], pos, [s], True) for s in range(n)])
                    if lc.llama_decode(ctx, batch) != 0:
                        raise SystemExit("decode failed")
                    tokens = [_argmax(lc, ctx, s, n_vocab, np) for s in range(n)]
                    pos += 1
                rounds.append((time.perf_counter() - started) / steps)
            per_step = statistics.median(rounds)
            results.append({"sequences": n, "seconds_per_step": round(per_step, 4),
                            "tokens_per_second": round(n / per_step, 2), "prefix_tokens": len(prompt),
                            "steps": steps, "rounds": [round(r, 4) for r in rounds]})
        base = results[0]["tokens_per_second"]
        for r in results:
            r["speedup_over_one"] = round(r["tokens_per_second"] / base, 2)
    finally:
        lc.llama_batch_free(batch)
        lc.llama_free(ctx)
        llm.close()
    return results


def _render(llm, messages: list[dict]) -> str:
    from localragas.judges.llama_steps import chat_formatter  # noqa: PLC0415
    import llama_cpp  # noqa: PLC0415

    formatter = chat_formatter(llm, llama_cpp)
    if formatter is None:
        raise SystemExit("this model's chat format is not one the judge renders")
    return formatter(messages=messages).prompt


def _fill(batch, rows: list[tuple[int, int, list[int], bool]]) -> None:
    """Put (token, position, sequence ids, wants logits) rows into a llama_batch."""
    for i, (token, pos, seqs, logits) in enumerate(rows):
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = len(seqs)
        for j, s in enumerate(seqs):
            batch.seq_id[i][j] = s
        batch.logits[i] = logits
    batch.n_tokens = len(rows)


def _argmax(lc, ctx, i: int, n_vocab: int, np) -> int:
    return int(np.argmax(np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, i), shape=(n_vocab,))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="a GGUF file (default: the default judge's)")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--prefix-tokens", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1,2,3,4")
    ap.add_argument("--out", type=Path, default=None, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    results = measure(args.model or _default_model(), args.steps, args.prefix_tokens, args.repeat,
                      [int(x) for x in args.sizes.split(",")])
    print(f"{'sequences':>9} {'s/step':>8} {'tokens/s':>9} {'speed-up':>8}")
    for r in results:
        print(f"{r['sequences']:>9} {r['seconds_per_step']:>8.4f} {r['tokens_per_second']:>9.2f} "
              f"{r['speedup_over_one']:>8.2f}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
