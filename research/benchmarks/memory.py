"""Wall time, peak memory and report size of one large `localragas eval` run with the fake judge and embedder.

    nice -n 19 .venv/bin/python -m research.benchmarks.memory [--samples 10000] [--seed 0] [--keep DIR] [-- EVAL_ARGS…]

Writes N synthetic samples (question, 3 contexts, answer, reference; varied text from a seeded generator) to a JSONL
file in a temporary folder, then runs the CLI in a child process from that folder (its judge cache and resume
checkpoint land there too):

    localragas eval samples.jsonl --judge fake --embedder fake --out report.json --no-progress [EVAL_ARGS…]

and prints the child's wall seconds, its user + system CPU seconds (on a shared machine the wall time stretches with
the load, the CPU time far less), its peak resident memory (ru_maxrss of the waited-for child) and the size of each
file it wrote. Exit code 1 (gate failed) counts as a finished run; any other non-zero code stops the script.
--keep DIR keeps the data and reports there instead of deleting them. The figures are in docs/speed.md.

Another version of the package, e.g. the one before a change, is measured from an exported copy:
`git archive REV localragas | tar -x -C /tmp/rev`, then `PYTHONPATH=/tmp/rev … research/benchmarks/memory.py`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = ("river bridge engine harbour museum glacier orchard library turbine canal vaccine satellite reactor "
         "protein archive tunnel festival cathedral volcano lighthouse battery desert forest railway").split()
VERBS = "opened measures supplies crossed produced hosts stores powers connects replaced".split()
PLACES = "Lisbon Oslo Kyoto Quito Nairobi Perth Lima Tallinn Hanoi Dakar Bergen Cusco".split()


def sentence(rng: random.Random) -> str:
    year = rng.randint(1850, 2024)
    return (f"The {rng.choice(WORDS)} of {rng.choice(PLACES)} {rng.choice(VERBS)} {rng.randint(2, 900)} "
            f"{rng.choice(WORDS)}s since {year}.")


def synthetic(i: int, rng: random.Random) -> dict:
    facts = [sentence(rng) for _ in range(4)]  # the last one is in no context
    contexts = [" ".join([facts[k], sentence(rng), sentence(rng)]) for k in range(3)]
    if rng.random() < 0.4:
        contexts[2] = " ".join(sentence(rng) for _ in range(3))  # an irrelevant chunk
    answer = " ".join([facts[0], facts[1] if rng.random() < 0.7 else sentence(rng), sentence(rng)])
    subject = facts[0].split(" of ")[0].removeprefix("The ")
    reference = " ".join(facts[:3] if rng.random() < 0.7 else facts)
    return {"id": f"s{i}", "question": f"What does the {subject} of {rng.choice(PLACES)} do?",
            "contexts": contexts, "answer": answer, "reference": reference,
            "category": rng.choice(("short", "long", "numeric"))}


def write_samples(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(synthetic(i, rng)) + "\n")


def cli() -> str:
    here = Path(sys.executable).with_name("localragas")
    found = str(here) if here.is_file() else shutil.which("localragas")
    if not found:
        raise SystemExit("the localragas command is not installed next to this Python nor on PATH")
    return found


def measured(cmd: list[str], folder: Path, env: dict) -> tuple[int, float, Any, str]:
    """Run `cmd` in a child from `folder` to its end: (exit code, wall seconds, the child's rusage, its stderr). Exit 0
    or 1 (gate failed) is a finished run; any other stops the script, showing the end of the child's stderr."""
    started = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = child.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{Path(cmd[0]).name} exited {code}: {' '.join(cmd)}\n{err[-2000:]}")
    return code, wall, usage, err


def usage_line(wall: float, usage: Any) -> str:
    return (f"wall: {wall:.1f} s  peak RSS: {usage.ru_maxrss / 1024:.0f} MB  "
            f"(user {usage.ru_utime:.1f} s, system {usage.ru_stime:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep the data and outputs in this folder")
    ap.add_argument("eval_args", nargs="*", help="more `localragas eval` arguments (after --)")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-memory-")) if args.keep is None else args.keep.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        write_samples(folder / "samples.jsonl", args.samples, args.seed)
        cmd = [cli(), "eval", "samples.jsonl", "--judge", "fake", "--embedder", "fake", "--out", "report.json",
               "--no-progress", *args.eval_args]
        env = {**os.environ, "LOCALRAGAS_STATE_DIR": str(folder / ".localragas"), "HF_HUB_OFFLINE": "1"}
        before = {p.name for p in folder.iterdir()}
        code, wall, usage, _ = measured(cmd, folder, env)
        written = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file() and p.name not in before}
        print(f"command: {' '.join(['localragas', *cmd[1:]])}  (exit {code})")
        print(f"samples: {args.samples:,}  input: {(folder / 'samples.jsonl').stat().st_size / 1e6:.1f} MB")
        print(usage_line(wall, usage))
        for name, size in written.items():
            print(f"wrote {name}: {size / 1e6:.1f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
