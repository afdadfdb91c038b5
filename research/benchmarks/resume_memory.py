"""Wall time and peak memory of a resumed `localragas eval`: a checkpoint of most of a large run's samples finished,
then the same command again, which takes them from the checkpoint and scores the rest.

    nice -n 19 .venv/bin/python -m research.benchmarks.resume_memory [--samples 100000] [--finished 0.9]
        [--seed 0] [--keep DIR] [-- EVAL_ARGS…]

Writes N synthetic samples (research/benchmarks/memory.py's generator) to a JSONL file in a folder, runs the eval once
to its end with the checkpoint kept (a child whose Checkpoint.remove only lets the lock go), keeps its first
--finished share of lines (finished.jsonl; a run of 1,000,000 killed at 900,000 leaves such a checkpoint), then puts
them back where the run keeps its checkpoint and runs the same command again in a child process, printing its wall
seconds, user + system CPU seconds and peak resident memory (ru_maxrss of the waited-for child), the "resumed: N"
line it printed, and whether its report equals the uninterrupted run's (every sample's scores, the summary, the
per-category summaries and the gate).

    localragas eval samples.jsonl --judge fake --embedder fake --out resumed.json --no-progress [EVAL_ARGS…]

With --keep DIR a second call reuses the samples, the uninterrupted report and finished.jsonl found there (only the
resumed run is measured again): measure another version of the package with the same checkpoint, e.g. the one before
a change, from an exported copy: `git archive REV localragas | tar -x -C /tmp/rev`, then
`PYTHONPATH=/tmp/rev … -m research.benchmarks.resume_memory --keep DIR`. The figures are in docs/speed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .memory import measured, usage_line, write_samples

KEEP_CHECKPOINT = ("from localragas.run.checkpoint import Checkpoint\n"
                   "Checkpoint.remove = lambda self: self.release()  # the run completes; its checkpoint stays\n"
                   "from localragas.cli import main\n"
                   "main()\n")


def eval_command(out: str, extra: list[str]) -> list[str]:
    return ["eval", "samples.jsonl", "--judge", "fake", "--embedder", "fake", "--out", out, "--no-progress", *extra]


def comparable(path: Path) -> dict:
    report = json.loads(path.read_text(encoding="utf-8"))
    return {"samples": [(s["id"], s["metrics"]) for s in report["samples"]], "summary": report["summary"],
            "by_category": report["by_category"], "gate": report["gate"]}


def prepare(folder: Path, args: argparse.Namespace, env: dict) -> None:
    """samples.jsonl, whole.json (the uninterrupted run) and finished.jsonl, unless already there."""
    if (folder / "finished.jsonl").is_file():
        return
    write_samples(folder / "samples.jsonl", args.samples, args.seed)
    _, wall, usage, _ = measured([sys.executable, "-c", KEEP_CHECKPOINT, *eval_command("whole.json", args.eval_args)],
                                 folder, env)
    print(f"uninterrupted run: {usage_line(wall, usage)}")
    [checkpoint] = (folder / ".localragas" / "runs").glob("*.jsonl")
    keep = int(args.samples * args.finished)
    with open(checkpoint, "rb") as src, open(folder / "finished.jsonl", "wb") as dst:
        for _, line in zip(range(keep), src):
            dst.write(line)
    (folder / "checkpoint-name").write_text(checkpoint.name, encoding="utf-8")
    checkpoint.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--finished", type=float, default=0.9, help="the share of the samples in the checkpoint")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the data, checkpoint and reports in this folder")
    ap.add_argument("eval_args", nargs="*", help="more `localragas eval` arguments (after --)")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-resume-")) if args.keep is None else args.keep.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LOCALRAGAS_STATE_DIR": str(folder / ".localragas"), "HF_HUB_OFFLINE": "1"}
    try:
        prepare(folder, args, env)
        runs = folder / ".localragas" / "runs"
        shutil.copyfile(folder / "finished.jsonl", runs / (folder / "checkpoint-name").read_text(encoding="utf-8"))
        cmd = [sys.executable, "-m", "localragas", *eval_command("resumed.json", args.eval_args)]
        _, wall, usage, err = measured(cmd, folder, env)
        resumed = next((line for line in err.splitlines() if line.startswith("resumed:")), "resumed: none")
        samples = sum(1 for _ in open(folder / "samples.jsonl", "rb"))
        finished = sum(1 for _ in open(folder / "finished.jsonl", "rb"))
        print(f"command: localragas {' '.join(cmd[3:])}")
        print(f"samples: {samples:,}, {finished:,} of them finished in the checkpoint "
              f"({(folder / 'finished.jsonl').stat().st_size / 1e6:.1f} MB); {resumed.split(' taken')[0]}")
        print(usage_line(wall, usage))
        same = comparable(folder / "resumed.json") == comparable(folder / "whole.json")
        print(f"report equal to the uninterrupted run's (scores, summary, by category, gate): {same}")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
