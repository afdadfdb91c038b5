"""Do two localragas reports hold the same results? Every sample's metric results (score, unscored reason,
evidence), its judge calls by prompt and in all, the summary, the gate and the metric list are compared, timings
("seconds") left out. Used to show that a refactoring changed no score (docs/architecture.md, round 2):

    python -m research.benchmarks.same_report before.json after.json

Prints the number of sample x metric results compared and each difference; exit 1 when there is one.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def without_timings(value: Any) -> Any:
    """The value with every "seconds" key left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def differences(a: dict, b: dict) -> tuple[int, list[str]]:
    """(sample x metric results compared, the differences as lines) between two report dicts."""
    found: list[str] = []

    def compare(what: str, x: Any, y: Any) -> None:
        x, y = without_timings(x), without_timings(y)
        if x != y:
            found.append(f"{what}: {json.dumps(x)[:300]} != {json.dumps(y)[:300]}")

    sa = {s["id"]: s for s in a["samples"]}
    sb = {s["id"]: s for s in b["samples"]}
    compare("sample ids", sorted(sa), sorted(sb))
    compared = 0
    for sid, sample in sa.items():
        other = sb.get(sid)
        if other is None:
            continue
        for metric in sorted(set(sample["metrics"]) | set(other["metrics"])):
            compared += 1
            compare(f"{sid}.{metric}", sample["metrics"].get(metric), other["metrics"].get(metric))
        for key in ("calls_by_prompt", "judge_calls"):
            compare(f"{sid}.{key}", sample.get(key), other.get(key))
    for key in ("summary", "gate", "metrics"):
        compare(key, a.get(key), b.get(key))
    return compared, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path, help="a report JSON (localragas eval --out)")
    ap.add_argument("after", type=Path, help="another report JSON of the same data")
    args = ap.parse_args(argv)
    compared, found = differences(*(json.loads(p.read_text(encoding="utf-8")) for p in (args.before, args.after)))
    print(f"{compared} sample x metric results compared; {len(found)} differences")
    for line in found[:50]:
        print("  " + line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
