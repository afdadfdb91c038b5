"""The run history at scale (docs/history.md quotes its figures): N runs of the examples (fake judge) recorded in a
fresh history, its file size, and how long `localragas runs` takes to list them (the newest 20, and --all), run as a
user runs it (a new process, its start-up included, and in-process).

    python -m research.benchmarks.history              # 10,000 runs
    python -m research.benchmarks.history 1000 /tmp/bench-state
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(n: int, state: Path) -> None:
    os.environ["LOCALRAGAS_STATE_DIR"] = str(state)
    import localragas
    from localragas.core import paths
    from localragas.run.history import History
    from localragas.run.history_record import run_record, scores_of

    samples, _ = localragas.load_samples(ROOT / "examples" / "rag_samples.jsonl")
    report = localragas.evaluate(samples, judge="fake", embedder="fake", cache=False, progress=False, history=False)
    report.meta["dataset"] = "examples/rag_samples.jsonl"
    record, scores = run_record(report), scores_of(report)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    t0 = time.perf_counter()
    with History() as h:
        for i in range(n):  # one transaction a run, as runs write
            h.add(record.model_copy(update={"started": (start + dt.timedelta(minutes=i)).isoformat(),
                                            "tags": ["nightly"] if i % 10 == 0 else []}), scores)
    wrote = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in state.glob("history.sqlite*"))
    print(f"{n} runs recorded in {wrote:.1f} s ({wrote / n * 1000:.2f} ms a run); {paths.history_file()}: "
          f"{size / 1e6:.1f} MB ({size / n:.0f} bytes a run)")
    exe = [sys.executable, "-m", "localragas"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["runs"], ["runs", "--tag", "nightly"], ["runs", "--all"]):
        t0 = time.perf_counter()
        out = subprocess.run(exe + args, env=env, capture_output=True, text=True, check=True).stdout
        took = time.perf_counter() - t0
        print(f"localragas {' '.join(args)}: {len(out.splitlines())} lines in {took:.2f} s (a new process)")
    with History() as h:
        for kw in ({"limit": 20}, {}):
            t0 = time.perf_counter()
            got = h.runs(**kw)
            print(f"History.runs({kw}): {len(got)} runs in {time.perf_counter() - t0:.3f} s (in-process)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=int, nargs="?", default=10_000, help="runs to record (default 10,000)")
    ap.add_argument("state", type=Path, nargs="?", help="a fresh state folder (default: a new temporary one)")
    args = ap.parse_args()
    main(args.runs, args.state or Path(tempfile.mkdtemp(prefix="localragas-bench-")))
