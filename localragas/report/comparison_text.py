"""The words of a comparison of two runs that each of its views shows (the terminal table and the Markdown,
report/comparison.py; the page of `compare --html`, report/comparison_html.py): the verdict labels, a change's
interval, how the runs' methods differ and the last word."""
from __future__ import annotations

from ..core.number_text import interval_text
from ..quality.compare import Comparison, MetricChange

# each verdict in plain words (the terminal, the HTML page)
VERDICT_WORDS = {"improved": "improved", "regressed": "REGRESSED", "within_noise": "within noise",
                 "not_comparable": "UNDECIDED (too few pairs)", "not_evaluated": "not evaluated (in either run)"}


def change_interval(lo: float | None, hi: float | None) -> str:
    """The interval of a change: +0.010 … +0.030."""
    return interval_text(lo, hi, form="ellipsis", signed=True)


def verdict_label(m: MetricChange, words: dict[str, str] = VERDICT_WORDS) -> str:
    """A metric's verdict in `words` (by verdict), marked when its method changed or it is a prediction-powered
    estimate."""
    return (words[m.verdict] + (" (method changed)" if m.method_changed else "")
            + (" (prediction-powered)" if m.estimate == "prediction-powered" else ""))


def method_lines(c: Comparison) -> list[str]:
    """How the runs' methods differ, in plain words, headed by what that means for the changes: shown before them.
    Empty when they measured the same way."""
    if not c.method_differences:
        return []
    if c.method_changed_for:
        head = (f"the method changed: the differences below mix the RAG system's change with the method's "
                f"({', '.join(c.method_changed_for)})")
    else:
        head = "the scores were measured the same way; these differ, and move no score:"
    return [head] + [f"- {d.text}" for d in c.method_differences]


def verdict_lines(c: Comparison) -> list[tuple[str, str]]:
    """The comparison's last word, as (style, text) lines: the metrics that regressed beyond noise, apart from them
    those that moved beyond noise under a changed method, which are not called a change of the RAG system, and those
    over too few pairs to decide. "No metric regressed" only when every metric was decided."""
    same = [m for m in c.regressed if m not in c.method_changed_for]
    mixed = [m for m in c.metrics if m.method_changed and m.verdict in ("regressed", "improved")]
    out = []
    if same:
        out.append(("bold red", f"regressed beyond noise: {', '.join(same)}"))
    if mixed:
        out.append(("yellow", "moved beyond noise under a changed method (not a change of the RAG system alone): "
                    + ", ".join(f"{m.metric} {VERDICT_WORDS[m.verdict].lower()}" for m in mixed)))
    if c.undecided:
        out.append(("bold yellow", f"undecided: {c.undecided_text()}"))
    elif not same and not mixed:
        out.append(("green", "no metric regressed beyond noise"
                    + (" (under a changed method: see above)" if c.method_changed_for else "")))
    return out
