"""Resident memory of a run's input samples: load_samples of a JSON Lines file of N synthetic samples, then one full
iteration over them (each sample's fields read, as a run reads them), in a child process.

    nice -n 19 .venv/bin/python -m research.benchmarks.input_memory [--samples 100000] [--data FILE.jsonl]
        [--keep DIR] [--against PACKAGE_DIR]

Writes --samples synthetic samples with research/benchmarks/memory.py's generator (or reads --data as it is), then
runs a fresh interpreter that loads them and iterates once, and prints its resident memory (VmRSS) after the imports,
after load_samples and after the iteration, its peak (ru_maxrss), the growth per sample and the wall seconds of each
step. --against PACKAGE_DIR measures that copy of the package too (e.g. the code before a change: `git archive REV
localragas | tar -x -C DIR`), and says whether both gave the same samples (a digest of every sample's fields).
The figures are in docs/speed.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .memory import write_samples

ROOT = Path(__file__).resolve().parents[2]


def rss_mb() -> float:
    """This process's resident memory now (Linux: /proc/self/status VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(data: Path) -> dict:
    """In the measured process: load, iterate, and the figures."""
    import localragas  # noqa: PLC0415 - the imports counted before the load
    from localragas.data.dataset import load_samples  # noqa: PLC0415

    out: dict = {"imports_mb": rss_mb(), "package": str(Path(localragas.__file__).parent)}
    t0 = time.perf_counter()
    samples, _ = load_samples(data)
    out.update(load_seconds=time.perf_counter() - t0, after_load_mb=rss_mb(), held_as=type(samples).__name__)
    t0, digest, count = time.perf_counter(), hashlib.sha256(), 0
    for sample in samples:
        digest.update(sample.model_dump_json().encode("utf-8"))
        count += 1
    out.update(iterate_seconds=time.perf_counter() - t0, after_iteration_mb=rss_mb(), samples=count,
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, digest=digest.hexdigest()[:16])
    out["bytes_per_sample"] = round((out["after_iteration_mb"] - out["imports_mb"]) * 1024 * 1024 / max(count, 1))
    return out


def measure(data: Path, package: Path | None) -> dict:
    paths = [str(package)] if package else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "research.benchmarks.input_memory", "--child", str(data)], env=env,
                          cwd=data.parent, capture_output=True, text=True, check=True)  # `-m` puts cwd first
    return json.loads(done.stdout.strip().splitlines()[-1])


def show(name: str, r: dict) -> None:
    print(f"{name} ({r['package']}): {r['samples']:,} samples held as {r['held_as']}; RSS {r['imports_mb']:.0f} MB after imports, "
          f"{r['after_load_mb']:.0f} MB after load_samples ({r['load_seconds']:.1f} s), {r['after_iteration_mb']:.0f} "
          f"MB after one iteration ({r['iterate_seconds']:.1f} s), peak {r['peak_mb']:.0f} MB; "
          f"{r['bytes_per_sample']:,} bytes a sample")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--data", type=Path, help="a JSON Lines file to load instead of writing synthetic samples")
    ap.add_argument("--keep", type=Path, help="keep the synthetic samples in this folder")
    ap.add_argument("--against", type=Path, help="another copy of the package to measure the same way")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    data = args.data
    if data is None:
        folder = Path(tempfile.mkdtemp(prefix="bench-input-")) if args.keep is None else args.keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "samples.jsonl"
        if not data.exists():
            write_samples(data, args.samples, 0)
    print(f"{data} ({data.stat().st_size / 1e6:.0f} MB)")
    now = measure(data.resolve(), None)
    show("this package", now)
    if args.against:
        before = measure(data.resolve(), args.against.resolve())
        show(str(args.against), before)
        print("same samples:", before["digest"] == now["digest"])
    if args.keep is None and args.data is None:
        data.unlink()
        data.parent.rmdir()


if __name__ == "__main__":
    main()
