"""The figures of research.benchmarks.side_by_side: what each report says of its run (walls, judge calls, prompt tokens
sent / reused / evaluated, generated tokens, per prompt family) and the before/after Markdown tables of docs/speed.md.

A report's counters: `meta.judge_totals` (the samples' judge calls), `meta.judge_check` and `meta.canaries` (their own
calls, counted apart), each sample's `calls_by_prompt` (per prompt family). A report of an older version that lacks
one of them counts 0 there. "Evaluated" prompt tokens are the ones sent less the ones whose KV state was reused
(`cached_tokens`).
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from .same_report import differences

PARTS = ("samples", "judge_check", "canaries")  # the run's judge work, as the report counts it
COUNTERS = ("calls", "prompt_tokens", "cached_tokens", "completion_tokens", "seconds")


def _counters(part: Mapping[str, Any] | None) -> dict[str, float]:
    """COUNTERS of one counted part (0 where absent); seconds from `judge_seconds` when the part has it (the time
    inside the judge, not the part's wall)."""
    part = part or {}
    out = {k: float(part.get(k) or 0) for k in COUNTERS}
    out["seconds"] = float(part.get("judge_seconds", part.get("seconds")) or 0)
    return out


def parts(report: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """PARTS -> their COUNTERS."""
    meta = report.get("meta") or {}
    return {"samples": _counters(meta.get("judge_totals")), "judge_check": _counters(meta.get("judge_check")),
            "canaries": _counters(meta.get("canaries"))}


def families(report: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Prompt family -> COUNTERS summed over the samples' calls_by_prompt."""
    out: dict[str, dict[str, float]] = {}
    for sample in report.get("samples") or []:
        for family, calls in (sample.get("calls_by_prompt") or {}).items():
            row = out.setdefault(family, dict.fromkeys(COUNTERS, 0.0))
            for k in COUNTERS:
                row[k] += float(calls.get(k) or 0)
    return out


def evaluated(c: Mapping[str, float]) -> float:
    return c["prompt_tokens"] - c["cached_tokens"]


def figures(report: Mapping[str, Any]) -> dict[str, Any]:
    """One report's figures: the report's wall, the judge's seconds and the token counts of the whole run (its three
    parts summed), the parts apart, and the samples' evaluated prompt tokens per sample."""
    by_part = parts(report)
    whole = {k: sum(p[k] for p in by_part.values()) for k in COUNTERS}
    n = len(report.get("samples") or [])
    return {"samples": n, "report_wall": float((report.get("meta") or {}).get("wall_seconds") or 0),
            "judge_seconds": whole["seconds"], "calls": {k: int(p["calls"]) for k, p in by_part.items()},
            "prompt_tokens": int(whole["prompt_tokens"]), "reused_tokens": int(whole["cached_tokens"]),
            "evaluated_tokens": int(evaluated(whole)), "generated_tokens": int(whole["completion_tokens"]),
            "samples_evaluated_tokens": int(evaluated(by_part["samples"])),
            "evaluated_per_sample": evaluated(by_part["samples"]) / n if n else 0.0,
            "parts": by_part, "families": families(report)}


def scores(report: Mapping[str, Any]) -> dict[tuple[str, str], float | None]:
    """(sample id, metric) -> its value (None: unscored)."""
    return {(s["id"], m): r.get("value") for s in report.get("samples") or [] for m, r in (s.get("metrics") or {}).items()}


def score_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """How many of the sample x metric values differ between two reports, by how much at most, and how many
    differences research.benchmarks.same_report finds in all (evidence, calls by prompt, summary, gate too)."""
    sa, sb = scores(a), scores(b)
    differ, largest = 0, 0.0
    for key in sorted(set(sa) | set(sb), key=str):
        x, y = sa.get(key), sb.get(key)
        if x != y:
            differ += 1
            if x is not None and y is not None:
                largest = max(largest, abs(x - y))
    _, found = differences(dict(a), dict(b))
    return {"compared": len(set(sa) | set(sb)), "differ": differ, "largest": largest, "same_report": len(found)}


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _s(x: float) -> str:
    return f"{x:,.1f} s"


def _ratio(before: float, after: float) -> str:
    return f"{before / after:.2f}×" if after else "—"


def _calls(c: Mapping[str, int]) -> str:
    return f"{_n(sum(c.values()))} ({_n(c['samples'])}; {_n(c['judge_check'])}; {_n(c['canaries'])})"


def main_table(labels: tuple[str, str], sides: tuple[Mapping[str, Any], Mapping[str, Any]], runs: int,
               own: Mapping[str, Any] | None = None) -> str:
    """The before/after table. sides: each side's figures() with `process_wall` (and the times the median of the
    runs when runs > 1)."""
    b, a = sides
    med = f" (median of {runs})" if runs > 1 else ""
    rows = [
        (f"process wall time{med}", _s(b["process_wall"]), _s(a["process_wall"]), _ratio(b["process_wall"], a["process_wall"])),
        (f"report wall (meta.wall_seconds){med}", _s(b["report_wall"]), _s(a["report_wall"]),
         _ratio(b["report_wall"], a["report_wall"])),
        (f"inside the judge{med}", _s(b["judge_seconds"]), _s(a["judge_seconds"]),
         _ratio(b["judge_seconds"], a["judge_seconds"])),
        ("judge calls (samples; the judge check; the canaries)", _calls(b["calls"]), _calls(a["calls"]),
         _ratio(sum(b["calls"].values()), sum(a["calls"].values()))),
    ]
    for label, key in (("prompt tokens sent", "prompt_tokens"), ("of which reused (cached)", "reused_tokens"),
                       ("evaluated (sent − reused)", "evaluated_tokens"), ("generated tokens", "generated_tokens")):
        rows.append((label, _n(b[key]), _n(a[key]), _ratio(b[key], a[key])))
    rows.append(("evaluated prompt tokens per sample (the samples' calls)", _n(b["evaluated_per_sample"]),
                 _n(a["evaluated_per_sample"]), _ratio(b["evaluated_per_sample"], a["evaluated_per_sample"])))
    if own and own.get("total"):
        per = own["total"] / own["samples"]
        rows.append((f"the samples' own tokens ({own['judge']}'s tokenizer)", _n(own["total"]), _n(own["total"]), ""))
        rows.append(("own tokens per sample", _n(per), _n(per), ""))
        rows.append(("evaluated prompt tokens / own tokens (the samples' calls)",
                     f"{b['samples_evaluated_tokens'] / own['total']:.2f}",
                     f"{a['samples_evaluated_tokens'] / own['total']:.2f}", ""))
    lines = [f"| | {labels[0]} | {labels[1]} | ratio |", "|---|---:|---:|---:|"]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    return "\n".join(lines)


def _arrow(before: float, after: float, fmt: Any) -> str:
    b, a = fmt(before), fmt(after)
    return b if b == a else f"{b} → {a}"


def family_table(sides: tuple[Mapping[str, Any], Mapping[str, Any]]) -> str:
    """Per prompt family of the samples' calls (then the judge check's and the canaries' calls): calls, evaluated
    prompt tokens, generated tokens, seconds in the judge, before → after."""
    fb, fa = (s["families"] for s in sides)
    empty = dict.fromkeys(COUNTERS, 0.0)
    names = sorted(set(fb) | set(fa), key=lambda f: -evaluated(fb.get(f, empty)))
    rows = [(f, fb.get(f, empty), fa.get(f, empty)) for f in names]
    rows += [(f"({p.replace('_', ' ')})", sides[0]["parts"][p], sides[1]["parts"][p]) for p in PARTS[1:]]
    lines = ["| family | calls | evaluated prompt tokens | generated tokens | seconds |", "|---|---:|---:|---:|---:|"]
    for name, x, y in rows:
        lines.append(f"| {name} | {_arrow(x['calls'], y['calls'], _n)} | {_arrow(evaluated(x), evaluated(y), _n)} | "
                     f"{_arrow(x['completion_tokens'], y['completion_tokens'], _n)} | "
                     f"{_arrow(x['seconds'], y['seconds'], lambda v: f'{v:,.1f}')} |")
    return "\n".join(lines)


def scores_line(d: Mapping[str, Any]) -> str:
    return (f"Scores: {d['differ']} of the {d['compared']} sample x metric values differ between the two reports, "
            f"by at most {d['largest']:.3f}; research.benchmarks.same_report finds {d['same_report']} differences in "
            "all (evidence, calls by prompt, summary, gate).")
