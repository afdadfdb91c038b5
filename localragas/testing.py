"""Gate RAG quality in your own tests: `assert_gate(report)` fails with what failed, and on which samples.

    from localragas import evaluate
    from localragas.testing import assert_gate

    report = evaluate(samples)
    assert_gate(report)          # AssertionError naming each failed metric, its worst samples and their evidence

Only pydantic models are touched here: importing this module loads no model and no heavy library.
"""
from __future__ import annotations

import warnings
from typing import Any

from .report.evidence import brief, definition_in, lower_is_better, short
from .core.number_text import interval_text, score_text, threshold_text
from .core.printable import printable
from .data.schema import MetricResult, MetricSummary, Report

__all__ = ["GateNotEvaluatedWarning", "assert_gate", "gate_failure_message"]

_UNSCORED_SHOWN = 10


class GateNotEvaluatedWarning(UserWarning):
    """The gate passed, but a metric it checks had no scored sample (so it checked nothing)."""


def assert_gate(report: Report, *, worst: int = 5) -> None:
    """Raise AssertionError when the report's quality gate failed.

    The message names each failed metric with its mean, threshold and confidence interval (when the report has
    one), the `worst` lowest-scoring samples with a piece of evidence each (unsupported claims, irrelevant chunk
    ranks, unattributed reference statements, noncommittal answers), and the samples that could not be scored,
    with their reasons. A gate that passed while a metric was not evaluated (no scored sample) gives a
    GateNotEvaluatedWarning instead of passing silently. A metric that errors (judge, cache, embedder) kept from
    being evaluated fails it, even with the gate off, and so does a report with no scored sample at all (no sample,
    or none a metric could score): it checked nothing.
    """
    if report.gate.passed and report.gate.evaluated:
        if not any(m.value is not None for s in report.samples for m in s.metrics.values()):
            __tracebackhide__ = True  # pytest: show the message, not this frame
            raise AssertionError(_nothing_scored(report))
        if report.gate.enabled:
            missing = [r for r in report.gate.results if r.status == "not_evaluated"]
            if missing:
                warnings.warn(
                    "localragas gate passed, but not evaluated (no scored sample): "
                    + "; ".join(_not_evaluated_text(report, r.metric) for r in missing),
                    GateNotEvaluatedWarning,
                    stacklevel=2,
                )
        return
    __tracebackhide__ = True  # pytest: show the message, not this frame
    raise AssertionError(gate_failure_message(report, worst=worst))


def gate_failure_message(report: Report, *, worst: int = 5) -> str:
    """The text assert_gate raises: failed metrics, their worst and unscored samples, then the other metrics."""
    gate = report.gate
    failed = [r for r in gate.results if r.status == "failed"]
    broken = [x for x in gate.errors if not x.allowed]
    on = getattr(gate, "on", "mean") or "mean"
    judge = (report.meta.get("judge") or {}).get("name") if isinstance(report.meta.get("judge"), dict) else None
    head = f"RAG quality gate failed: {len(failed)} of {len(gate.results)} gated metric(s) below threshold"
    if broken:
        head += f", {len(broken)} metric(s) could not be evaluated (errors left samples unscored)"
    facts = [f"{len(report.samples)} sample(s)"]
    if judge:
        facts.append(f"judge {judge}")
    if on != "mean":
        facts.append(f"gate on the CI {on}")
    lines = [f"{head} ({', '.join(facts)})"]
    for x in broken:
        lines += ["", f"COULD NOT EVALUATE {x.message}"]
        lines.extend(_sample_lines(report, x.metric, None, 0))
    for r in failed:
        s = _summary(report, r.metric)
        lines.append("")
        lines.append(f"FAILED {r.metric}: {_numbers(r.mean, r.threshold, s, r)}")
        if r.message:
            lines.append(f"  {r.message}")
        lines.extend(_sample_lines(report, r.metric, r.threshold, worst))
    others = [r for r in gate.results if r.status not in ("failed", "error")]
    if others:
        lines.append("")
        for r in others:
            if r.status == "not_evaluated":
                lines.append(f"NOT EVALUATED {_not_evaluated_text(report, r.metric)}")
            else:
                lines.append(f"passed {r.metric}: {_numbers(r.mean, r.threshold, _summary(report, r.metric), r)}")
    if report.skipped:
        lines.append(f"{len(report.skipped)} input row(s) were skipped as invalid and not evaluated")
    return printable("\n".join(lines), newlines=True)  # ids and evidence from data: no raw control character


def _nothing_scored(report: Report) -> str:
    """assert_gate's message for a report with no scored sample: each metric and why it scored none."""
    lines = [f"RAG quality gate checked nothing: no scored sample ({len(report.samples)} sample(s))"]
    lines += [f"NOT EVALUATED {_not_evaluated_text(report, m)}" for m in report.metrics if report.samples]
    if report.skipped:
        lines.append(f"{len(report.skipped)} input row(s) were skipped as invalid and not evaluated")
    return printable("\n".join(lines), newlines=True)


# --- pieces -----------------------------------------------------------------------------------------------------


def _summary(report: Report, metric: str) -> MetricSummary | None:
    try:
        return report.summary_for(metric)
    except KeyError:
        return None


def _numbers(mean: float | None, threshold: float, s: MetricSummary | None, gate_result: Any = None) -> str:
    parts = [f"mean {score_text(mean, missing='n/a')}", f"threshold {threshold_text(threshold)}"]
    low = getattr(s, "ci_low", None) if s is not None else None
    high = getattr(s, "ci_high", None) if s is not None else None
    if low is None and gate_result is not None:  # a gate result may carry the interval too
        low, high = getattr(gate_result, "ci_low", None), getattr(gate_result, "ci_high", None)
    if low is not None and high is not None:
        parts.append(f"95% CI {interval_text(low, high, form='brackets')}")
    if s is not None:
        parts.append(f"{s.scored} scored" + (f", {s.unscored} unscored" if s.unscored else ""))
    return ", ".join(parts)


def _not_evaluated_text(report: Report, metric: str) -> str:
    s = _summary(report, metric)
    if s is None or not s.unscored_reasons:
        return f"{metric}: no scored sample"
    reasons = ", ".join(f"{n} {k}" for k, n in s.unscored_reasons.items())
    return f"{metric}: no scored sample (unscored: {reasons})"


def _sample_lines(report: Report, metric: str, threshold: float | None, worst: int) -> list[str]:
    scored: list[tuple[float, str, MetricResult]] = []
    unscored: list[tuple[str, MetricResult]] = []
    for sr in report.samples:
        m = sr.metrics.get(metric)
        if m is None:
            continue
        if m.value is None:
            unscored.append((sr.id, m))
        else:
            scored.append((m.value, sr.id, m))
    out: list[str] = []
    lower = lower_is_better(report, metric)  # noise sensitivity: the highest scores are the worst
    scored.sort(key=lambda t: (-t[0] if lower else t[0], t[1]))
    if worst > 0 and scored and threshold is not None:
        below = sum(1 for v, _, _ in scored if (v > threshold if lower else v < threshold))
        shown = scored[:worst]
        side = "above" if lower else "below"
        out.append(f"  worst {len(shown)} of {len(scored)} scored sample(s) "
                   f"({below} {side} {threshold_text(threshold)}):")
        width = max(len(sid) for _, sid, _ in shown)
        for value, sid, m in shown:
            ev = brief(definition_in(report, metric), m)
            out.append(f"    {sid:<{width}}  {score_text(value)}" + (f"  {ev}" if ev else ""))
    if unscored:
        out.append(f"  unscored ({len(unscored)}; left out of the mean):")
        for sid, m in unscored[:_UNSCORED_SHOWN]:
            out.append(f"    {sid}: {short(m.unscored or 'no reason recorded', 160)}")
        if len(unscored) > _UNSCORED_SHOWN:
            out.append(f"    … and {len(unscored) - _UNSCORED_SHOWN} more")
    return out
