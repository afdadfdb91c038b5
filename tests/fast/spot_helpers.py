"""Reports whose metrics list judged items with the samples' text, and people's labels on a plan's draws: for the
spot-check tests (quality/spot_checks.py, data/labels.py, the gate with labels)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from localragas.data.labels import Design, Label, append_label
from localragas.data.schema import Gate, MetricResult, Report, SampleInput, SampleResult
from localragas.metrics.context_precision import average_precision
from localragas.quality.review_draw import Shown, plan
from localragas.quality.review_items import review_items
from localragas.run.regate import regate


def checked_report(samples: int = 40, seed: int = 0, judge_shift: float = 0.0, thresholds=None,
                   gate_on: str = "mean") -> Report:
    """`samples` samples scored for faithfulness (2-4 statements each), context_recall and context_precision (3
    chunks), graded: each item's judge P(yes) is its hidden truth's chance plus judge_shift (a biased judge). The
    truth of an item: `truth(item)` below (its text says it)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(samples):
        contexts = [f"Context {c} of sample {s}." for c in range(3)]
        metrics = {}
        for metric, plural, field, flag, k in (("faithfulness", "claims", "claim", "supported", 2 + s % 3),
                                               ("context_recall", "statements", "statement", "attributed", 2)):
            rows = []
            for i in range(k):
                chance = float(rng.uniform(0.05, 0.95))
                true = int(rng.uniform() < chance)
                p = float(np.clip(chance + judge_shift, 0, 1))
                rows.append({field: f"s{s} {metric} item {i} (run {seed}) truth={true}", flag: p >= 0.5, f"p_{flag}": round(p, 4),
                             f"p_{flag}_raw": round(p, 4)})
            metrics[metric] = MetricResult.of(sum(r[f"p_{flag}"] for r in rows) / k, verdicts="probability",
                                              **{plural: rows})
        chunks = []
        for c in range(3):
            p = float(np.clip(rng.uniform(0.05, 0.95) + judge_shift, 0, 1))
            chunks.append({"rank": c + 1, "relevant": p >= 0.5, "p_relevant": round(p, 4), "p_relevant_raw": round(p, 4)})
        metrics["context_precision"] = MetricResult.of(average_precision([x["p_relevant"] for x in chunks]),
                                                       verdicts="probability", chunks=chunks)
        out.append(SampleResult(id=f"s{s}", metrics=metrics,
                                input=SampleInput(question=f"Question {s}?", answer=f"Answer {s}.", contexts=contexts,
                                                  reference=f"Reference {s}.")))
    metric_names = ["faithfulness", "context_recall", "context_precision"]
    report = Report(meta={"judge": {"name": "fake"}}, metrics=metric_names, gate=Gate(enabled=True, passed=True),
                    samples=out)
    return regate(report, thresholds or {"faithfulness": 0.5, "context_recall": 0.5, "context_precision": 0.5},
                  gate_on=gate_on)


def truth(item) -> int:
    """The hidden truth of a checked_report item: its text's truth=, a chunk's from its sample and index parity."""
    if "truth=" in item.text:
        return int(item.text.rsplit("truth=", 1)[1])
    return int((item.chunk + int(item.sample_id[1:])) % 2 == 0)


def label_items(report: Report, path: Path, metrics=("faithfulness",), n: int = 30, seed: int = 0,
                reviewer: str = "ana", answer: Callable[[Shown], int | None] | None = None, limit: int | None = None,
                data: Path | None = None, note: str = "") -> list[Shown]:
    """Label the first `limit` shown items of the plan (all by default) as `answer` (default: the truth) says; data:
    the data file of a report that keeps no text."""
    shown = plan(review_items(report, list(metrics), data_path=data), metrics, n, seed)[:limit]
    for x in shown:
        label = answer(x) if answer else truth(x.item)
        append_label(path, Label(key=x.item.key, sample_id=x.item.sample_id, metric=x.item.metric, item=x.item.index,
                                 item_hash=x.item.key.rsplit("|", 1)[1], label=label, reviewer=reviewer,
                                 time="2026-12-01T10:00:00+00:00", note=note,
                                 design=Design(seed=x.seed, focus=x.focus, draws=x.orders, p=x.p)))
    return shown
