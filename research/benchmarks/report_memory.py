"""Wall time and peak memory of the report path at scale: a JSON report of N finished sample results turned into the
summary, intervals, gate and the JSON, CSV, HTML, Markdown and JUnit files by `localragas report` (the aggregates,
gate and writers eval uses), in a child process.

    nice -n 10 .venv/bin/python -m research.benchmarks.report_memory [--samples 1000000] [--seed-samples 2000]
        [--seed-report REPORT.json] [--keep DIR] [--against PACKAGE_DIR]

Scoring a million samples with the fake judge takes ~70 CPU-minutes, so the results are made, not judged: a seed
run (`localragas eval` of --seed-samples synthetic samples from research/benchmarks/memory.py, fake judge and
embedder) gives real results with their evidence, which are repeated with new ids (r0, r1, …) into a report of
--samples results, written one sample at a time (--seed-report: the results of an existing JSON report instead, e.g.
the 100,000 of a memory.py run kept with --keep). The child then runs

    localragas report big.json --out out.json --csv out.csv --html out.html --md out.md --junit out.xml

(an existing big.json in the --keep folder is used as it is), and the script prints its wall seconds, CPU seconds and peak resident memory (ru_maxrss), and the size of each file.
--against PACKAGE_DIR runs the same command again with that copy of the package first on PYTHONPATH (e.g. the code
before a change, `git archive REV localragas | tar -x -C DIR`) and says whether the two runs give the same summary,
per-category summaries and gate. Exit code 1 (gate failed) counts as a finished run.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .memory import cli, write_samples

OUTPUTS = ["--out", "out.json", "--csv", "out.csv", "--html", "out.html", "--md", "out.md", "--junit", "out.xml"]


def seed_results(folder: Path, n: int) -> dict:
    """A JSON report of n synthetic samples scored with the fake judge (the seed run)."""
    write_samples(folder / "seed.jsonl", n, 0)
    env = {**os.environ, "LOCALRAGAS_STATE_DIR": str(folder / ".localragas"), "HF_HUB_OFFLINE": "1"}
    cmd = [cli(), "eval", "seed.jsonl", "--judge", "fake", "--embedder", "fake", "--out", "seed.json",
           "--no-progress", "--no-cache", "--no-resume"]
    code = subprocess.run(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL).returncode
    if code not in (0, 1):
        raise SystemExit(f"the seed run exited {code}: {' '.join(cmd)}")
    return json.loads((folder / "seed.json").read_text(encoding="utf-8"))


def write_report(path: Path, seed: dict, n: int) -> None:
    """A report of n results: the seed's, repeated with new ids, one sample a line."""
    samples = seed.pop("samples")
    seed["meta"]["samples"] = n
    head = json.dumps(seed, ensure_ascii=False)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head[:-1] + ', "samples": [\n')
        for i in range(n):
            f.write(("," if i else "") + json.dumps({**samples[i % len(samples)], "id": f"r{i}"}) + "\n")
        f.write("]}\n")


def make_report(folder: Path, args: argparse.Namespace) -> None:
    """big.json from the seed, in a child process: the child that runs `localragas report` is started by this script,
    and on Linux a process's peak RSS (ru_maxrss) starts from its parent's at fork/exec, so this script must never
    hold the seed's results itself."""
    seed = (json.loads(args.seed_report.read_text(encoding="utf-8")) if args.seed_report
            else seed_results(folder, args.seed_samples))
    print(f"seed: {len(seed['samples']):,} results, repeated", flush=True)
    write_report(folder / "big.json", seed, args.samples)


def run_report(folder: Path, package: str | None, size: int) -> dict:
    """`localragas report big.json` with every output, in a child: its figures."""
    cmd = [cli(), "report", "big.json", *OUTPUTS, "--max-input-bytes", str(size + 1)]
    env = {**os.environ, "LOCALRAGAS_STATE_DIR": str(folder / ".localragas"), "HF_HUB_OFFLINE": "1"}
    if package:
        env["PYTHONPATH"] = os.pathsep.join([package, *filter(None, [os.environ.get("PYTHONPATH")])])
    for name in OUTPUTS[1::2]:
        (folder / name).unlink(missing_ok=True)
    started = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"localragas report exited {code}: {' '.join(cmd)}")
    print(f"command: localragas {' '.join(cmd[1:])}  (exit {code}{', package ' + package if package else ''})")
    print(f"wall: {wall:.1f} s  peak RSS: {usage.ru_maxrss / 1024:.0f} MB  "
          f"(user {usage.ru_utime:.1f} s, system {usage.ru_stime:.1f} s)")
    for name in OUTPUTS[1::2]:
        print(f"wrote {name}: {(folder / name).stat().st_size / 1e6:.1f} MB")
    return gated(folder / "out.json")


def gated(path: Path) -> dict:
    """The summary, per-category summaries and gate of a JSON report, read without its samples."""
    out, keys = {}, ("summary", "by_category", "gate")
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8") as f:
        text = f.read(1 << 24)  # the head: everything before the samples
    for key in keys:
        at = text.index(f'\n  "{key}": ') + len(f'\n  "{key}": ')
        out[key] = decoder.raw_decode(text, at)[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seed-samples", type=int, default=2_000)
    ap.add_argument("--seed-report", type=Path, help="repeat this JSON report's results instead of a seed run's")
    ap.add_argument("--keep", type=Path, help="keep the data and outputs in this folder")
    ap.add_argument("--against", help="also run with this copy of the package and compare the gate")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-report-")) if args.keep is None else args.keep.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if not (folder / "big.json").is_file():  # made in a process of its own (see make_report)
            maker = multiprocessing.get_context("fork").Process(target=make_report, args=(folder, args))
            maker.start()
            maker.join()
            if maker.exitcode:
                raise SystemExit(f"making big.json failed (exit {maker.exitcode})")
        size = (folder / "big.json").stat().st_size
        print(f"results: {args.samples:,}  big.json: {size / 1e6:.1f} MB")
        mine = run_report(folder, None, size)
        if args.against:
            theirs = run_report(folder, args.against, size)
            same = {k: mine[k] == theirs[k] for k in mine}
            print(f"same as {args.against}: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in same.items()))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
