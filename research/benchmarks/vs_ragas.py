"""Side-by-side speed benchmark: localragas against ragas 0.4.3 on the same judge GGUF.

Run it from the checkout, after `bash scripts/setup.sh`, with the project's interpreter:

    .venv/bin/python -m research.benchmarks.vs_ragas

Smoke run (tiny judge, 4 samples; ragas's unconstrained replies from a 135M judge often run on to the context limit,
so a shorter ragas timeout keeps it under half an hour):

    .venv/bin/python -m research.benchmarks.vs_ragas --judge smollm2-135m --limit 2 --bench-rows 1 --ragas-timeout 120

What happens, in order:
1. A separate virtual environment, .localragas/bench-venv, is created once (and reused while it works) with
   ragas 0.4.3, LangChain, PyTorch 2.13.0 (CPU) and the same llama-cpp-python wheel as the project venv plus its
   server extras. ragas never enters the project venv.
2. ragas runs first: llama-cpp-python's OpenAI-compatible server serves the judge GGUF on a free loopback port and
   a child process in the bench venv (research/benchmarks/ragas_child.py) scores one (sample, metric) at a time.
3. localragas runs second, in this process, with the judge loaded once in-process.
4. A table per metric and overall (samples/min, judge tokens per sample, seconds per sample, failures, ratios) is
   printed and everything, per-sample timings included, is written to --out (default .localragas/bench.json).

Both tools score exactly the same (sample, metric) pairs. See docs/benchmark.md.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import platform
import re
import signal
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from research.benchmarks.ragas_harness import (
    BENCH_VENV,
    ROOT,
    STATE_DIR,
    LlamaServer,
    drive_child,
    ensure_bench_venv,
    log,
    on_sigterm,
    project_llama_version,
    resolve_judge,
    venv_python,
)

SHARED_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
BENCH_FILES = ("faithfulness_faithbench.jsonl", "context_precision_ranked_wikiqa.jsonl")
DEFAULT_DATA = ROOT / "examples" / "rag_samples.jsonl"
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")

NOISE_NOTE = "Timings on a shared machine are noisy: only the localragas/ragas ratios are meaningful."


# ----------------------------------------------------------------------------------------------------- samples


def context_chars(contexts: list[str]) -> int:
    return sum(len(c) for c in contexts)


def applicable_metrics(sample: dict, wanted: list[str]) -> list[str]:
    """The metrics both tools can score on this sample (the same rule for both, so they do the same work)."""
    has_answer, has_reference = bool(sample["answer"].strip()), bool(sample["reference"])
    has_contexts = bool(sample["contexts"])
    possible = {
        "faithfulness": has_answer and has_contexts,
        "answer_relevancy": has_answer,
        "context_precision": has_contexts and (has_reference or has_answer),
        "context_recall": has_reference and has_contexts,
    }
    return [m for m in wanted if possible[m]]


def load_data_file(path: Path, limit: int | None) -> list[dict]:
    """Rows of a user dataset (any format localragas reads), validated by localragas's own loader."""
    from localragas import load_samples  # noqa: PLC0415

    samples, _ = load_samples(path)
    return [
        {"id": s.id, "question": s.question, "contexts": s.contexts, "answer": s.answer, "reference": s.reference,
         "reference_from": "reference" if s.reference else None}
        for s in samples[:limit]
    ]


def load_bench_file(path: Path, rows: int, max_chars: int, wanted: list[str]) -> tuple[list[dict], dict[str, int]]:
    """The first `rows` usable rows of a shared benchmark file, read in memory only (never copied).

    Rows without answer and reference (the ranked WikiQA file) get as reference the chunks that people labelled
    relevant (meta.relevance): in WikiQA those sentences are the answer. Rows with too long contexts or with no
    metric to score are skipped and counted.
    """
    picked, skipped = [], {"context_over_budget": 0, "nothing_to_score": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if len(picked) >= rows:
                break
            if not line.strip():
                continue
            row = json.loads(line)
            if context_chars(row["contexts"]) > max_chars:
                skipped["context_over_budget"] += 1
                continue
            sample = {"id": row["id"], "question": row["question"], "contexts": row["contexts"],
                      "answer": row.get("answer") or "", "reference": row.get("reference") or None,
                      "reference_from": "reference" if row.get("reference") else None}
            relevance = (row.get("meta") or {}).get("relevance")
            if not sample["answer"].strip() and not sample["reference"] and relevance and any(relevance):
                sample["reference"] = " ".join(c for c, r in zip(row["contexts"], relevance) if r)
                sample["reference_from"] = "meta.relevance"
            if not applicable_metrics(sample, wanted):
                skipped["nothing_to_score"] += 1
                continue
            picked.append(sample)
    return picked, skipped


def collect_samples(args: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    """(samples, dataset descriptions). Each sample gets a unique key, its dataset and its applicable metrics."""
    datasets: list[tuple[str, list[dict], dict]] = []
    for path in args.data or [DEFAULT_DATA]:
        rows = load_data_file(Path(path), args.limit)
        datasets.append((Path(path).stem, rows, {"path": str(path)}))
    if args.bench_rows > 0 and SHARED_BENCHMARKS.is_dir():
        n = min(args.bench_rows, args.limit) if args.limit else args.bench_rows
        for name in BENCH_FILES:
            path = SHARED_BENCHMARKS / name
            if path.is_file():
                rows, skipped = load_bench_file(path, n, args.max_context_chars, args.metrics)
                datasets.append((path.stem, rows, {"path": str(path), "skipped_rows": skipped}))
    elif args.bench_rows > 0:
        log(f"{SHARED_BENCHMARKS} not found: benchmarking on --data only")

    samples, described = [], []
    for name, rows, info in datasets:
        for row in rows:
            row.update(key=f"{name}/{row['id']}", dataset=name, metrics=applicable_metrics(row, args.metrics))
            if row["metrics"]:
                samples.append(row)
        described.append({"name": name, **info, "samples": len(rows), "ids": [r["id"] for r in rows]})
    return samples, described


def jobs_of(samples: list[dict], metrics: list[str]) -> list[tuple[dict, str]]:
    """(sample, metric) pairs, metric by metric, in sample order: the order both tools run in."""
    return [(s, m) for m in metrics for s in samples if m in s["metrics"]]


# ------------------------------------------------------------------------------------------------------- ragas


def run_ragas(args: argparse.Namespace, jobs: list[tuple[dict, str]], judge_path: Path, alias: str,
              embedder_dir: Path) -> dict[str, Any]:
    """ragas in the bench venv, against the llama.cpp server; returns its versions, config and records."""
    versions, venv_seconds = ensure_bench_venv()
    python = venv_python(BENCH_VENV)
    server = LlamaServer(python, judge_path, alias, args.n_ctx, args.threads, STATE_DIR / "bench-server.log")
    with tempfile.TemporaryDirectory(prefix="localragas-bench-") as tmp:
        job_file, out_file = Path(tmp) / "jobs.json", Path(tmp) / "records.jsonl"
        job_file.write_text(json.dumps({
            "model": alias, "embedder": str(embedder_dir), "timeout": args.ragas_timeout,
            "jobs": [{"key": s["key"], "metric": m, "sample": _ragas_fields(s)} for s, m in jobs],
        }))
        started = time.perf_counter()
        log_start = server.log_path.stat().st_size if server.log_path.is_file() else 0
        with server:
            drive_child(python, server, job_file, out_file)
        wall = time.perf_counter() - started
        evaluated = server_evaluated(server.log_path, log_start)
        records = [json.loads(line) for line in out_file.read_text().splitlines() if line.strip()]
    return {
        "versions": versions,
        "bench_venv_build_seconds": round(venv_seconds, 1),
        "wall_seconds": round(wall, 1),
        "server": {"command": server.command()[1:], "restarts_after_failures": server.restarts},
        "evaluated": evaluated,
        "config": {
            "llm": f"LangchainLLMWrapper(ChatOpenAI(base_url=server/v1, model={alias!r}, temperature=0, "
                   f"timeout={args.ragas_timeout}), bypass_n=True)",
            "embeddings": f"LangchainEmbeddingsWrapper(HuggingFaceEmbeddings(model_name={str(embedder_dir)!r}))",
            "metrics": {"faithfulness": "Faithfulness", "answer_relevancy": "ResponseRelevancy (strictness 3)",
                        "context_precision": "LLMContextPrecisionWithReference, "
                                             "else LLMContextPrecisionWithoutReference",
                        "context_recall": "LLMContextRecall"},
            "call": f"metric.init(RunConfig(timeout={args.ragas_timeout})); "
                    f"await metric.single_turn_ascore(sample, timeout={args.ragas_timeout}) per (sample, metric)",
            "max_tokens": "not set (ragas default): the server generates until the model stops or the context is full",
        },
        "records": records,
    }


_PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*[\d.]+ ms /\s*(\d+) tokens")
_EVAL = re.compile(r"\beval time\s*=\s*[\d.]+ ms /\s*(\d+) runs")


def server_evaluated(log_path: Path, start: int) -> dict[str, int]:
    """The tokens the llama.cpp server evaluated for ragas, from its log after byte `start`: llama.cpp's timings
    printed after each completion (the server is verbose; timings are reset per request): prompt tokens evaluated
    (those past the prefix kept from the previous request), generated tokens (eval runs) and requests."""
    text = log_path.read_bytes()[start:].decode("utf-8", errors="replace") if log_path.is_file() else ""
    prompt = [int(m) for m in _PROMPT_EVAL.findall(text)]
    generated = [int(m) for m in _EVAL.findall(text)]
    return {"prompt": sum(prompt), "generated": sum(generated), "requests": len(prompt)}


def _ragas_fields(sample: dict) -> dict:
    return {"user_input": sample["question"], "retrieved_contexts": sample["contexts"],
            "response": sample["answer"] or None, "reference": sample["reference"]}


# -------------------------------------------------------------------------------------------------- localragas


def cache_off(fn: Any) -> dict[str, Any]:
    """Arguments that keep the judge cache off for whichever cache option `fn` takes (cached replies would fake
    the speed): evaluate(cache=False) (evaluate() caches by default)."""
    params = inspect.signature(fn).parameters
    return {name: off for name, off in (("cache", False), ("cache_dir", None)) if name in params}


def run_localragas(args: argparse.Namespace, jobs: list[tuple[dict, str]]) -> dict[str, Any]:
    """localragas in this process: one judge (loaded once), evaluate() per (sample, metric), each run's stats."""
    from localragas import __version__, evaluate, get_embedder, get_judge  # noqa: PLC0415
    from localragas.data.schema import Sample  # noqa: PLC0415

    judge_kwargs, eval_kwargs = cache_off(get_judge), cache_off(evaluate)
    t0 = time.perf_counter()
    # The same context window and threads as the llama.cpp server of the ragas run.
    judge = get_judge(args.judge, options={"n_ctx": args.n_ctx, "n_threads": args.threads}, **judge_kwargs)
    load_seconds = time.perf_counter() - t0
    embedder = None
    if any(m == "answer_relevancy" for _, m in jobs):
        embedder = get_embedder()
        embedder.embed(["warm up"])  # load the model now, not inside the first timed sample
    log(f"localragas judge {judge.name} loaded in {load_seconds:.1f} s")

    records, started = [], time.perf_counter()
    try:
        for i, (sample, metric) in enumerate(jobs, 1):
            s = Sample(id=sample["id"], question=sample["question"], contexts=sample["contexts"],
                       answer=sample["answer"], reference=sample["reference"])
            t = time.perf_counter()
            stats: dict = {}
            try:
                report = evaluate([s], metrics=[metric], judge=judge, embedder=embedder, gate=False,
                                  judge_check=False, **eval_kwargs)  # the scoring's cost only, as ragas has no check
                result, error, stats = report.samples[0].metrics[metric], None, report.meta["judge_stats"]
            except Exception as e:  # noqa: BLE001 - a benchmark records failures and goes on
                result, error = None, f"{type(e).__name__}: {e}"
            seconds = time.perf_counter() - t
            record = _localragas_record(sample["key"], metric, seconds, stats, result, error)
            records.append(record)
            log(f"localragas {i}/{len(jobs)} {metric} {sample['key']}: {_brief(record)}")
    finally:
        judge.close()
    return {
        "version": __version__,
        "judge": judge.describe(),
        "judge_load_seconds": round(load_seconds, 2),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "cache": f"off: {_kwargs(judge_kwargs | eval_kwargs)}"
                 if eval_kwargs or judge_kwargs else "localragas has no cache option",
        "call": "evaluate([sample], metrics=[metric], judge=<one LlamaCppJudge>, embedder=<one embedder>, gate=False)",
        "records": records,
    }


def _kwargs(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _localragas_record(key: str, metric: str, seconds: float, stats: dict, result, error) -> dict:
    """One (sample, metric): its run's judge counters (report.meta judge_stats; none when the run raised)."""
    delta = {k: stats.get(k, 0) for k in ("calls", "cache_hits", "parse_failures", "prompt_tokens", "completion_tokens",
                                          "cached_tokens")}
    record = {"sample": key, "metric": metric, "seconds": round(seconds, 3), "calls": delta["calls"],
              "prompt_tokens": delta["prompt_tokens"], "completion_tokens": delta["completion_tokens"],
              "value": None, "nan": False, "parse_errors": delta["parse_failures"], "exception": error, "note": None,
              "cache_hits": delta["cache_hits"],  # always 0: the cache is off
              "evaluated_tokens": delta["prompt_tokens"] - delta["cached_tokens"] + delta["completion_tokens"]}
    if result is not None and result.value is not None:
        record["value"] = result.value
    elif result is not None:
        reason = result.unscored or ""
        if reason.startswith(("judge_error", "error:")):
            record["exception"] = reason  # the judge failed (parse failure, truncation, context overflow) or a bug
        else:
            record["nan"], record["note"] = True, reason  # unscored for a reason of the data, e.g. no_claims
    return record


def _brief(record: dict) -> str:
    value = "NaN" if record["value"] is None else f"{record['value']:.2f}"
    text = f"{record['seconds']:.1f} s, {record['prompt_tokens'] + record['completion_tokens']} tokens, value {value}"
    if record["exception"]:
        text += f", error: {record['exception'][:120]}"
    return text


# ------------------------------------------------------------------------------------------------------ summary


def stats_of(records: list[dict], samples: int) -> dict[str, Any]:
    seconds = sum(r["seconds"] for r in records)
    prompt, completion = sum(r["prompt_tokens"] for r in records), sum(r["completion_tokens"] for r in records)
    return {
        "samples": samples,
        "seconds": round(seconds, 2),
        "samples_per_min": round(samples * 60 / seconds, 3) if seconds else None,
        "seconds_per_sample": round(seconds / samples, 2) if samples else None,
        "tokens_per_sample": round((prompt + completion) / samples, 1) if samples else None,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "judge_calls": sum(r["calls"] for r in records),
        "nan": sum(1 for r in records if r["nan"]),
        "parse_errors": sum(r["parse_errors"] for r in records),
        "exceptions": sum(1 for r in records if r["exception"]),
    }


def summarise(records: list[dict], metrics: list[str]) -> dict[str, dict]:
    """Per metric, and overall: all metrics of a sample together (their times and tokens summed)."""
    out = {}
    for m in metrics:
        rows = [r for r in records if r["metric"] == m]
        if rows:
            out[m] = stats_of(rows, len(rows))
    if records:
        out["overall"] = stats_of(records, len({r["sample"] for r in records}))
    return out


def ratios(ours: dict | None, theirs: dict | None) -> dict[str, dict]:
    """localragas / ragas per row: speed (samples/min) and judge tokens."""
    out = {}
    for name in (ours or {}):
        a, b = ours[name], (theirs or {}).get(name)
        if not b or a["samples"] != b["samples"]:
            continue
        speed = a["samples_per_min"] / b["samples_per_min"] if a["samples_per_min"] and b["samples_per_min"] else None
        b_tokens, a_tokens = b["prompt_tokens"] + b["completion_tokens"], a["prompt_tokens"] + a["completion_tokens"]
        out[name] = {"speed": round(speed, 3) if speed else None,
                     "tokens": round(a_tokens / b_tokens, 3) if b_tokens else None}
    return out


def evaluated_per_sample(result: dict, samples: int) -> dict[str, float | None]:
    """Tokens the model evaluated per sample, all metrics: prompt tokens not kept from an earlier call plus generated
    tokens. localragas: its counters (prompt - cached + completion); ragas: the server's timings (server_evaluated)."""
    out: dict[str, float | None] = {}
    if "ragas" in result and samples:
        e = result["ragas"].get("evaluated") or {}
        out["ragas"] = round((e.get("prompt", 0) + e.get("generated", 0)) / samples, 1) if e.get("requests") else None
    if "localragas" in result and samples:
        out["localragas"] = round(sum(r.get("evaluated_tokens", 0) for r in result["localragas"]["records"]) / samples,
                                  1)
    return out


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def print_table(summary: dict[str, dict], rates: dict[str, dict]) -> None:
    head = f"{'metric':<18} {'n':>3}  {'tool':<10} {'samples/min':>11} {'tokens/sample':>13} {'s/sample':>9}" \
           f" {'NaN':>4} {'parse':>5} {'exc':>4}"
    print("\n" + head + "\n" + "-" * len(head))
    rows = [k for k in (*METRICS, "overall") if any(k in (summary.get(t) or {}) for t in ("ragas", "localragas"))]
    for name in rows:
        first = True
        for tool in ("ragas", "localragas"):
            s = (summary.get(tool) or {}).get(name)
            if not s:
                continue
            label, n = (name, str(s["samples"])) if first else ("", "")
            print(f"{label:<18} {n:>3}  {tool:<10} {_fmt(s['samples_per_min'], '11.2f')} "
                  f"{_fmt(s['tokens_per_sample'], '13.0f')} {_fmt(s['seconds_per_sample'], '9.1f')} "
                  f"{s['nan']:>4} {s['parse_errors']:>5} {s['exceptions']:>4}")
            first = False
        if name in rates:
            r = rates[name]
            speed = f"{_fmt(r['speed'], '.2f')}x" if r["speed"] else "-"
            tokens = f"{_fmt(r['tokens'], '.2f')}x" if r["tokens"] else "-"
            print(f"{'':<18} {'':>3}  {'ratio':<10} {speed:>11} {tokens:>13}")
        print()
    print("ratio: localragas / ragas (speed: samples/min, higher = localragas faster; tokens: lower = localragas"
          " uses fewer).\nNaN: unscored (ragas NaN; localragas unscored for a data reason); parse: judge replies"
          " that did not parse; exc: (sample, metric) runs that ended in an error or timeout.")
    print(NOISE_NOTE)


# ------------------------------------------------------------------------------------------------- machine, main


def machine_info() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    mem_gb = None
    with contextlib.suppress(OSError, StopIteration, ValueError):
        kb = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
        mem_gb = round(int(kb.split()[1]) / 1024 / 1024, 1)
    return {"cores": os.cpu_count(), "cpu": cpu, "memory_gb": mem_gb, "platform": platform.platform(),
            "python": platform.python_version(), "llama-cpp-python": project_llama_version()}


def metric_list(values: list[str] | None) -> list[str]:
    names = [n.strip() for v in values or [] for n in v.split(",") if n.strip()] or list(METRICS)
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise SystemExit(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(METRICS)}")
    return list(dict.fromkeys(names))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Speed benchmark of localragas against ragas 0.4.3 on the same judge GGUF (ragas first, then "
                    "localragas, on the same samples). " + NOISE_NOTE,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", action="append", metavar="FILE",
                   help="dataset to benchmark on (any format localragas reads), repeatable; "
                        f"default {DEFAULT_DATA.relative_to(ROOT)}")
    p.add_argument("--bench-rows", type=int, default=8, metavar="N",
                   help=f"also take the first N usable rows of {', '.join(BENCH_FILES)} from {SHARED_BENCHMARKS} "
                        "when that folder exists (read in memory, never copied); 0 to leave them out")
    p.add_argument("--max-context-chars", type=int, default=6000, metavar="N",
                   help="skip shared benchmark rows whose contexts hold more characters than this")
    p.add_argument("--limit", type=int, metavar="N", help="at most N samples from each dataset")
    p.add_argument("--judge", default="qwen2.5-1.5b", metavar="NAME|PATH",
                   help="judge GGUF for both tools: a localragas catalogue name or a .gguf file "
                        "(smollm2-135m for a quick smoke run)")
    p.add_argument("--metrics", action="append", metavar="NAME[,NAME]",
                   help=f"metrics to time, repeatable or comma-separated; default all of {', '.join(METRICS)}")
    p.add_argument("--out", type=Path, default=STATE_DIR / "bench.json", metavar="FILE",
                   help="JSON file for every result, per-sample timings and machine info")
    p.add_argument("--ragas-timeout", type=float, default=600, metavar="SECONDS",
                   help="ragas: timeout of one (sample, metric) run (RunConfig.timeout, ragas's default is 180) "
                        "and of each HTTP request to the judge server")
    p.add_argument("--n-ctx", type=int, default=8192, metavar="TOKENS",
                   help="context window of the judge, for both tools (localragas's default is 8192 too)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="CPU threads of the judge, for both tools (localragas's default: all cores)")
    p.add_argument("--skip-ragas", action="store_true", help="do not run ragas (debugging)")
    p.add_argument("--skip-localragas", action="store_true", help="do not run localragas (debugging)")
    p.add_argument("--setup-only", action="store_true",
                   help=f"only create or check {BENCH_VENV.relative_to(ROOT)}, then exit")
    args = p.parse_args(argv)
    args.metrics = metric_list(args.metrics)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.setup_only:
        versions, seconds = ensure_bench_venv()
        print(json.dumps({"bench_venv": str(BENCH_VENV), "build_seconds": round(seconds, 1), "versions": versions},
                         indent=2))
        return 0
    from localragas.judges import catalogue  # noqa: PLC0415 - fails early when not run with the project venv

    judge_path, alias = resolve_judge(args.judge)
    samples, datasets = collect_samples(args)
    jobs = jobs_of(samples, args.metrics)
    if not jobs:
        raise SystemExit("nothing to benchmark: no sample has a field set that the chosen metrics need")
    log(f"{len(samples)} samples, {len(jobs)} (sample, metric) runs per tool; judge {judge_path.name}")
    result: dict[str, Any] = {
        "command": [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])],
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "note": NOISE_NOTE,
        "machine": machine_info(),
        "judge": {"spec": args.judge, "path": str(judge_path), "sha256": catalogue.sha256_of(judge_path)},
        "settings": {"metrics": args.metrics, "limit": args.limit, "bench_rows": args.bench_rows,
                     "max_context_chars": args.max_context_chars, "n_ctx": args.n_ctx, "threads": args.threads,
                     "ragas_timeout": args.ragas_timeout},
        "datasets": datasets,
        "samples": [{k: s[k] for k in ("key", "dataset", "metrics", "reference_from")}
                    | {"contexts": len(s["contexts"]), "context_chars": context_chars(s["contexts"])} for s in samples],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not args.skip_ragas:
        result["ragas"] = run_ragas(args, jobs, judge_path, alias, catalogue.path("minilm-l6"))
        result["machine"]["ragas"] = result["ragas"]["versions"]["ragas"]
        args.out.write_text(json.dumps(result, indent=2) + "\n")  # kept should the localragas side fail
        log(f"ragas records written to {args.out}")
    if not args.skip_localragas:
        result["localragas"] = run_localragas(args, jobs)
    summary = {tool: summarise(result[tool]["records"], args.metrics)
               for tool in ("ragas", "localragas") if tool in result}
    summary["ratios"] = ratios(summary.get("localragas"), summary.get("ragas"))
    summary["evaluated_tokens_per_sample"] = evaluated_per_sample(result, len(samples))
    result["summary"] = summary
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print_table(summary, summary["ratios"])
    for tool, per_sample in summary["evaluated_tokens_per_sample"].items():
        print(f"tokens evaluated per sample (all metrics), {tool}: {per_sample}")
    print(f"full results: {args.out}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted; the llama.cpp server and the ragas child were stopped")
        sys.exit(130)
