"""Throughput of the engines: evaluate() of N samples on the local engine and on Dask with 1 and 2 local workers, with
a fake judge that takes 10 ms a call (the heuristic's replies after a sleep: a judge server's latency, not CPU).

    nice -n 5 .venv/bin/python -m research.benchmarks.engines [--samples 160] [--delay-ms 10]

The samples are examples/rag_samples.jsonl repeated under new ids; the four core metrics, the hashing embedder, no
cache. For each engine: the wall seconds of the scoring (report.meta.wall_seconds: after the cluster is up and the
judge check asked) and of the whole call (with the cluster's start and close), the judge calls, samples/s of the
scoring, and at the end the ratio of 2 Dask workers to 1 (the target is at least 1.6x). Every engine's report must
hold the same scores, or the script stops. The figures are in docs/scale-out.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def slow_reply(prompt, output, delay=0.010):
    from localragas.judges.fake import heuristic_reply  # noqa: PLC0415

    time.sleep(delay)
    return heuristic_reply(prompt, output)


def run(engine: str, address: str | None, samples: list, delay: float) -> tuple[dict, object]:
    from functools import partial  # noqa: PLC0415

    from localragas import evaluate  # noqa: PLC0415
    from localragas.judges import FakeJudge  # noqa: PLC0415

    started = time.perf_counter()
    report = evaluate(samples, judge=FakeJudge(responder=partial(slow_reply, delay=delay), record=False),
                      embedder="fake", cache=False, progress=False, engine=engine, address=address)
    total = time.perf_counter() - started
    scoring = report.meta["wall_seconds"]
    return {"wall": scoring, "total": total, "calls": report.meta["judge_stats"]["calls"],
            "rate": len(samples) / scoring}, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m research.benchmarks.engines", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=160, help="samples to score (default 160)")
    parser.add_argument("--delay-ms", type=float, default=10.0, help="the fake judge's time per call (default 10)")
    args = parser.parse_args(argv)

    import cloudpickle  # noqa: PLC0415

    from localragas import load_samples  # noqa: PLC0415

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers get slow_reply by value
    base = load_samples(ROOT / "examples" / "rag_samples.jsonl")[0]
    samples = [s.model_copy(update={"id": f"{s.id}-{k}"}) for k in range(-(-args.samples // len(base))) for s in base]
    samples = samples[:args.samples]
    rows, reports = {}, {}
    for label, engine, address in (("local", "local", None), ("dask, 1 worker", "dask", "local:1"),
                                   ("dask, 2 workers", "dask", "local:2")):
        rows[label], reports[label] = run(engine, address, samples, args.delay_ms / 1000)
        r = rows[label]
        print(f"{label:16} scoring {r['wall']:7.2f} s  whole call {r['total']:7.2f} s  calls {r['calls']:6d}  "
              f"{r['rate']:6.2f} samples/s", flush=True)
    scores = {k: [(s.id, {n: m.value for n, m in s.metrics.items()}) for s in r.samples] for k, r in reports.items()}
    if len({repr(v) for v in scores.values()}) != 1:
        print("the engines' scores differ", file=sys.stderr)
        return 1
    ratio = rows["dask, 1 worker"]["wall"] / rows["dask, 2 workers"]["wall"]
    print(f"2 workers vs 1: {ratio:.2f}x (target >= 1.6x); the same scores on every engine")
    return 0


if __name__ == "__main__":  # local:N starts worker processes, which import the main module again
    sys.exit(main())
