"""Sharded runs: `eval --shard i/n` scores a deterministic slice (run/shard_spec.py); merge() joins shard reports into one report with
the same aggregates, intervals and gate as an unsharded run of the same data."""
from __future__ import annotations

from ..core.errors import LocalragasError
from ..data.schema import Report
from .canaries import merged as merged_canaries
from .regate import regate
from .results import RunResults


def _same(reports: list[Report], what: str, get) -> None:
    values = [get(r) for r in reports]
    if any(v != values[0] for v in values[1:]):
        raise LocalragasError(f"cannot merge: the shards differ in {what} ({values[0]!r} vs "
                              f"{next(v for v in values if v != values[0])!r})")


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    """Per-key sums of the shards' counters (meta.languages)."""
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + int(v)
    return dict(sorted(out.items()))


def merge(reports: list[Report], overrides: dict[str, float] | None = None, gate_on: str | None = None,
          enabled: bool = True, max_error_rate: float | None = None) -> Report:
    """One report from the reports of shards 1..n of one run (any order). Refuses shards of different runs.

    The merged report is gated (enabled=False: not) whether or not the shards were run with --no-gate, with the
    shards' thresholds (overrides over them), --gate-on and --max-error-rate (gate_on, max_error_rate over them)."""
    if not reports:
        raise LocalragasError("nothing to merge")
    shards = [r.meta.get("shard") for r in reports]
    if any(s is None for s in shards):
        raise LocalragasError("cannot merge: a report was not made with --shard (meta.shard is missing)")
    _same(reports, "shard count", lambda r: r.meta["shard"]["count"])
    _same(reports, "dataset size", lambda r: r.meta["shard"]["total"])
    _same(reports, "dataset content (sha256)", lambda r: r.meta.get("dataset_sha256"))
    _same(reports, "metrics", lambda r: r.metrics)
    _same(reports, "judge", lambda r: (r.meta.get("judge") or {}).get("fingerprint"))
    _same(reports, "judge calibration (sha256)", lambda r: (r.meta.get("calibration") or {}).get("sha256"))
    _same(reports, "embedder", lambda r: (r.meta.get("embedder") or {}).get("name"))
    _same(reports, "thresholds", lambda r: r.meta.get("thresholds"))
    _same(reports, "language", lambda r: r.meta.get("language", "auto"))
    _same(reports, "metric options", lambda r: r.meta.get("metric_options") or {})
    _same(reports, "sample text kept (--no-sample-text)", lambda r: r.meta.get("sample_text"))
    defined = reports[0].definitions
    differ = sorted({n for r in reports[1:] for n in {*r.definitions, *defined}
                     if r.definitions.get(n) != defined.get(n)})
    if differ:
        raise LocalragasError(f"cannot merge: the shards differ in the definitions of {', '.join(differ)}")
    _same(reports, "gate settings", lambda r: (r.gate.on, r.gate.max_error_rate))  # --no-gate or not: merge gates
    count = shards[0]["count"]
    got = sorted(s["index"] for s in shards)
    if got != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(got))
        dupes = sorted({i for i in got if got.count(i) > 1})
        raise LocalragasError(f"cannot merge: shards of {count} expected once each"
                              + (f"; missing {', '.join(map(str, missing))}" if missing else "")
                              + (f"; given twice {', '.join(map(str, dupes))}" if dupes else ""))
    for r in reports:
        positions = r.meta["shard"]["positions"]
        if len(positions) != len(r.samples):
            raise LocalragasError(f"cannot merge: shard {r.meta['shard']['index']} lists {len(positions)} positions "
                                  f"for {len(r.samples)} samples")
    placed = RunResults(shards[0]["total"], reports[0].metrics)  # on disk past SPILL_AFTER samples, as a run's
    for r in reports:
        for position, sample in zip(r.meta["shard"]["positions"], r.samples):
            placed.put(position, sample)
    samples = placed.done()
    skipped, seen = [], set()
    for r in reports:
        for row in r.skipped:
            if (row.path, row.line) not in seen:
                seen.add((row.path, row.line))
                skipped.append(row)
    first = reports[0].meta
    counters = [r.meta.get("judge_stats") or {} for r in reports]
    stats = {k: round(sum(c.get(k, 0) for c in counters), 3) for k, v in (counters[0] or {}).items()
             if isinstance(v, (int, float))}
    stats["errors"] = [e for c in counters for e in c.get("errors", [])][:20]
    judge_seconds = sum(c.get("seconds", 0) for c in counters)
    meta = {
        **{k: v for k, v in first.items() if k not in ("shard", "started", "wall_seconds", "resumed_samples")},
        "samples": len(samples),
        "started": min(str(r.meta.get("started", "")) for r in reports),
        "wall_seconds": max(float(r.meta.get("wall_seconds", 0)) for r in reports),
        "judge_seconds_all_shards": round(judge_seconds, 3),
        "resumed_samples": sum(int(r.meta.get("resumed_samples", 0)) for r in reports),
        "languages": _summed([r.meta.get("languages") or {} for r in reports]),
        "judge_stats": stats,
        "canaries": merged_canaries([r.meta.get("canaries") for r in reports],
                                    [f"{r.meta['shard']['index']}/{count}" for r in reports]),
        "judge_totals": {k: round(sum((r.meta.get("judge_totals") or {}).get(k, 0) for r in reports), 3)
                         for k in (first.get("judge_totals") or {})},
        "merged_from": [{"shard": f"{r.meta['shard']['index']}/{count}", "samples": len(r.samples),
                         "wall_seconds": r.meta.get("wall_seconds"), "started": r.meta.get("started")}
                        for r in sorted(reports, key=lambda r: r.meta["shard"]["index"])],
    }
    meta.pop("share_of_wall_in_judge", None)  # wall time of parallel shards is not one clock
    merged = Report(meta=meta, metrics=reports[0].metrics, definitions=reports[0].definitions, gate=reports[0].gate,
                    samples=samples, skipped=skipped)
    return regate(merged, overrides=overrides, gate_on=gate_on, enabled=enabled, max_error_rate=max_error_rate)
