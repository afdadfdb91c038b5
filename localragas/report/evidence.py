"""Short, human-readable reasons behind a sample's score, for gate messages, Markdown and the pytest plugin."""
from __future__ import annotations

from ..schema import MetricResult, Report, SampleResult


def _clip(text: str, n: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def brief(metric: str, result: MetricResult) -> str:
    """One line on why this score: unsupported claims, irrelevant chunk ranks, missing statements, and so on."""
    if result.value is None:
        return f"unscored: {result.unscored}"
    ev = result.evidence
    if "claims" in ev:
        bad = [c["claim"] for c in ev["claims"] if not c.get("supported")]
        return f"{len(bad)}/{len(ev['claims'])} claims unsupported" + (f", e.g. \"{_clip(bad[0])}\"" if bad else "")
    if "statements" in ev:
        bad = [s["statement"] for s in ev["statements"] if not s.get("attributed")]
        return (f"{len(bad)}/{len(ev['statements'])} reference statements not in the contexts"
                + (f", e.g. \"{_clip(bad[0])}\"" if bad else ""))
    if "chunks" in ev:
        ranks = [str(c["rank"]) for c in ev["chunks"] if not c.get("relevant")]
        return f"irrelevant chunk ranks: {', '.join(ranks)}" if ranks else "every chunk relevant"
    if ev.get("noncommittal"):
        return "answer judged noncommittal (evasive)"
    if "generated_questions" in ev:
        qs = ev["generated_questions"]
        worst = min(qs, key=lambda q: q["similarity"]) if qs else None
        return f"least similar generated question ({worst['similarity']:.2f}): \"{_clip(worst['question'])}\"" if worst else ""
    return _clip(", ".join(f"{k}={v}" for k, v in ev.items()))


def worst_samples(report: Report, metric: str, k: int = 5) -> list[tuple[SampleResult, MetricResult]]:
    """The k lowest-scoring samples of a metric (ties by id), scored ones only."""
    got = [(s, s.metrics[metric]) for s in report.samples if metric in s.metrics and s.metrics[metric].value is not None]
    return sorted(got, key=lambda p: (p[1].value, p[0].id))[:k]


def unscored_samples(report: Report, metric: str) -> list[tuple[SampleResult, MetricResult]]:
    return [(s, s.metrics[metric]) for s in report.samples if metric in s.metrics and s.metrics[metric].value is None]
