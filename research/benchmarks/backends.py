"""Samples per minute of each judge backend on the same samples, one configuration after the other.

    .venv/bin/python -m research.benchmarks.backends [--data examples/rag_samples.jsonl] [--model smollm2-135m]
        [--llama-server PATH]   # also llama.cpp's own server with 4 parallel slots (-np 4)

Configurations: the in-process llamacpp judge; the transformers judge (the same GGUF loaded through transformers
on CPU, decoding constrained by xgrammar, batched); the openai judge against llama-cpp-python's server
(`python -m llama_cpp.server`, one request at a time) with --concurrency 1 and 4; the openai judge round-robin over
4 such servers with --concurrency 4; and, given --llama-server, llama.cpp's server with -np 4 and --concurrency 1
and 4. Every run is `localragas eval … --no-cache --no-resume -e fake` (the judge alone is timed: the embedder is the
hashing fake) and the figure is samples / meta.wall_seconds. Servers listen on free loopback ports and are stopped
after their runs. Prints a Markdown table, then each configuration's agreement with the in-process run (metric values identical, and
the mean absolute difference), and writes the reports under --out.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from research.benchmarks.ragas_harness import free_port

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def wait_ready(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"server at {url} not ready in {seconds} s")


def start(cmd: list[str], port: int, log: Path) -> tuple[subprocess.Popen, str]:
    url = f"http://127.0.0.1:{port}/v1"
    proc = subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    wait_ready(url, proc)
    return proc, url


def py_server(model_path: Path, alias: str, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    return start([PY, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", alias,
                  "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
                  "--n_threads", str(threads), "--n_threads_batch", str(threads)], port, log)


def cpp_server(binary: str, model_path: Path, alias: str, slots: int, threads: int, log: Path):
    port = free_port()
    return start([binary, "-m", str(model_path), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
                  "-c", str(8192 * slots), "-np", str(slots), "-t", str(threads), "-tb", str(threads)], port, log)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def run_eval(data: Path, out: Path, judge: str, options: dict[str, str], concurrency: int) -> dict:
    cmd = [str(ROOT / ".venv" / "bin" / "localragas"), "eval", str(data), "--judge", judge, "-e", "fake",
           "--no-cache", "--no-resume", "--no-progress", "--no-gate", "--concurrency", str(concurrency),
           "--no-judge-check", "--out", str(out)]  # the scoring's speed; smollm2 behind a server is not exempt
    for k, v in options.items():
        cmd += ["--judge-option", f"{k}={v}"]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    report = json.loads(out.read_text())
    meta = report["meta"]
    n = len(report["samples"])
    scores = {(s["id"], name): m.get("value") for s in report["samples"] for name, m in s["metrics"].items()}
    return {"samples": n, "wall": meta["wall_seconds"], "per_min": 60 * n / meta["wall_seconds"],
            "calls": meta["judge_stats"]["calls"], "failed": meta["judge_stats"]["failed_calls"], "scores": scores}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "examples" / "rag_samples.jsonl")
    ap.add_argument("--model", default="smollm2-135m", help="a catalogue judge (never run the default here lightly)")
    ap.add_argument("--structured", default="json_object", help="structured mode for llama-cpp-python's server")
    ap.add_argument("--llama-server", help="path to llama.cpp's llama-server binary (for -np 4)")
    ap.add_argument("--cpp-structured", default="json_schema", help="structured mode for llama-server")
    ap.add_argument("--only", help="comma-separated subset of: inproc,tf,py1,py4,rr4,cpp1,cpp4")
    ap.add_argument("--out", type=Path, default=ROOT / ".localragas" / "bench-backends")
    args = ap.parse_args()
    busy = "\n".join(line for line in subprocess.run(
        ["pgrep", "-af", "bench_vs_ragas|llama_cpp.server|localragas eval|llama-server|injection_flip_rate|pytest"],
        capture_output=True,
        text=True).stdout.splitlines() if "bench_backends" not in line)
    if busy:  # timings taken beside another model run on the same cores mean nothing
        raise SystemExit(f"another model run is going on; try later:\n{busy}")
    from localragas.judges import catalogue  # noqa: PLC0415

    model_path = catalogue.path(args.model)
    args.out.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    only = set(args.only.split(",")) if args.only else None
    def want(k: str) -> bool:
        return only is None or k in only

    rows: list[tuple[str, dict]] = []
    opts = {"structured": args.structured, "timeout": "600"}

    if want("inproc"):
        rows.append(("llamacpp in-process", run_eval(args.data, args.out / "inproc.json", args.model, {}, 1)))
    if want("tf"):
        rows.append(("transformers (GGUF through transformers, CPU)",
                     run_eval(args.data, args.out / "tf.json", f"transformers:{args.model}", {"device": "cpu"}, 1)))
    if want("py1") or want("py4"):
        proc, url = py_server(model_path, args.model, cores, args.out / "py-server.log")
        try:
            for c in (1, 4):
                if want(f"py{c}"):
                    rows.append((f"openai → llama_cpp.server (1 slot), --concurrency {c}",
                                 run_eval(args.data, args.out / f"py{c}.json", f"openai:{args.model}",
                                          {**opts, "base_url": url}, c)))
        finally:
            stop(proc)
    if want("rr4"):
        started = [py_server(model_path, args.model, max(cores // 4, 1), args.out / f"rr-{i}.log") for i in range(4)]
        try:
            urls = ",".join(u for _, u in started)
            rows.append(("openai → 4 × llama_cpp.server round-robin, --concurrency 4",
                         run_eval(args.data, args.out / "rr4.json", f"openai:{args.model}",
                                  {**opts, "base_url": urls}, 4)))
        finally:
            for proc, _ in started:
                stop(proc)
    if args.llama_server and (want("cpp1") or want("cpp4")):
        proc, url = cpp_server(args.llama_server, model_path, args.model, 4, cores, args.out / "cpp-server.log")
        try:
            for c in (1, 4):
                if want(f"cpp{c}"):
                    rows.append((f"openai → llama-server -np 4, --concurrency {c}",
                                 run_eval(args.data, args.out / f"cpp{c}.json", f"openai:{args.model}",
                                          {"timeout": "600", "base_url": url, "structured": args.cpp_structured},
                                          c)))
        finally:
            stop(proc)

    print(f"\n{args.data.name}, judge {args.model}, {cores} cores\n")
    print("| configuration | samples | wall s | samples/min | judge calls | failed |")
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['samples']} | {r['wall']:.1f} | {r['per_min']:.1f} | {r['calls']} | {r['failed']} |")
    if rows:
        base_name, base = rows[0]
        print(f"\nagreement with {base_name} (metric values of the same samples):\n")
        print("| configuration | identical | both scored | mean absolute difference |")
        print("|---|---|---|---|")
        for name, r in rows[1:]:
            print(f"| {name} | {agreement(base['scores'], r['scores'])} |")


def agreement(a: dict, b: dict) -> str:
    """'identical / compared | both scored | mean |a - b| over values scored in both runs'."""
    keys = sorted(set(a) & set(b))
    same = sum(1 for k in keys if a[k] == b[k] or (a[k] is not None and b[k] is not None and abs(a[k] - b[k]) < 1e-9))
    both = [k for k in keys if a[k] is not None and b[k] is not None]
    mad = sum(abs(a[k] - b[k]) for k in both) / len(both) if both else float("nan")
    return f"{same} / {len(keys)} | {len(both)} | {mad:.3f}"


if __name__ == "__main__":
    main()
