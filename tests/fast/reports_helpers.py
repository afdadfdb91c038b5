"""Build Reports from plain per-sample values, for tests of aggregates, gate, compare and report formats."""
from __future__ import annotations

from localragas.run.regate import regate
from localragas.data.schema import Gate, MetricResult, Report, SampleResult


def make_report(values: dict[str, dict[str, float | None]], thresholds: dict[str, float] | None = None,
                judge: str = "fake", embedder: str = "fake", gate: bool = True, gate_on: str = "mean",
                category: dict[str, str] | None = None) -> Report:
    """values: sample id -> metric -> value (None: unscored with reason 'no_reference')."""
    metrics = list(dict.fromkeys(m for row in values.values() for m in row))
    samples = []
    for sid, row in values.items():
        res = {}
        for m, v in row.items():
            if v is None:
                res[m] = MetricResult.unscored_because("no_reference")
            elif m == "faithfulness":
                res[m] = MetricResult.of(v, claims=[{"claim": f"claim of {sid}", "supported": v >= 0.5},
                                                    {"claim": "second", "supported": True}])
            else:
                res[m] = MetricResult.of(v)
        samples.append(SampleResult(id=sid, category=(category or {}).get(sid), metrics=res))
    meta = {"judge": {"name": judge, "fingerprint": f"fp-{judge}"}, "embedder": {"name": embedder},
            "samples": len(samples), "wall_seconds": 1.5, "started": "2026-11-30T03:00:00+00:00"}
    report = Report(meta=meta, metrics=metrics, gate=Gate(enabled=gate, passed=True), samples=samples)
    return regate(report, thresholds or {}, gate_on=gate_on, enabled=gate)
