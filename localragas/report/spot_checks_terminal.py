"""The terminal's "checked by people" table (report.spot_checks, docs/spot-checks.md): per checked metric, the labels,
the judge against the people, the three means, and the gate's three-way reading."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..core.number_text import interval_text, score_text, threshold_text
from ..data.schema import Report
from ..data.spot_check_models import Figure, MetricSpotCheck, PPIResult
from .console import Columns, console_text as _t

_READING = {"passes": "[green]passes for sure[/]", "fails": "[bold red]fails for sure[/]",
            "undecided": "[yellow]undecided[/]"}


def _mean(p: PPIResult) -> str:
    return "—" if p.mean is None else f"{score_text(p.mean)} {interval_text(p.ci_low, p.ci_high)}"


def _figure(f: Figure) -> str:
    return "—" if f.value is None else score_text(f.value)


def reading_text(c: MetricSpotCheck) -> str:
    """The gate's reading on the prediction-powered interval, in words (plain text)."""
    g = c.gate
    if g is None:
        return "no threshold" if c.ppi_mean.mean is not None else "no prediction-powered mean"
    text = {"passes": "passes for sure", "fails": "fails for sure", "undecided": "undecided"}[g.reading]
    text += f" at {threshold_text(g.threshold)}"
    if g.reading == "undecided" and g.more_labels is not None:
        text += f": about {g.more_labels} more label(s) would decide it"
    return text


def print_spot_checks(report: Report, console: Console) -> None:
    checks = report.spot_checks
    if checks is None or not checks.metrics:
        return
    t = Table(title="checked by people", title_justify="left")
    columns: Columns = [("metric", "left"), ("labelled", "right"), ("accuracy", "right"), ("bal. acc.", "right"),
                        ("judge only", "right"), ("labels only", "right"), ("people+judge (PPI)", "right"),
                        ("gate reading", "left")]
    for col, just in columns:
        t.add_column(col, justify=just, overflow="fold")
    for name, c in checks.metrics.items():
        labelled = f"{c.draws} ({len(c.reviewers)} rev.)"
        if c.skipped:
            labelled += f", {c.skipped} skipped"
        reading = _t(reading_text(c))
        if c.gate:
            reading = reading.replace(_t(reading.split(" at ")[0]), _READING[c.gate.reading], 1)
        t.add_row(_t(name), labelled, _figure(c.accuracy), _figure(c.balanced_accuracy), _mean(c.judge_mean),
                  _mean(c.labels_mean), _mean(c.ppi_mean) + (f"\nλ {c.ppi_mean.lam:.2f}" if c.ppi_mean.mean is not None
                                                             else ""), reading if c.trustworthy else
                  f"[yellow]not used by the gate[/]: {_t(c.note or '')}")
    console.print(t)
    for name, c in checks.metrics.items():
        extra = []
        if c.bias is not None:
            extra.append(f"judge bias {c.bias:+.3f} (judge mean - people's on the labelled draws)")
        if c.disagreements:
            extra.append(f"{c.disagreements} item(s) the reviewers disagree on"
                         + (f", Cohen's kappa {score_text(c.kappa)}" if c.kappa is not None else ""))
        if c.disagreeing:
            extra.append(f"{len(c.disagreeing)} item(s) where the judge and the people disagree (in the JSON report)")
        if extra:
            console.print(f"  {_t(name)}: " + "; ".join(_t(x) for x in extra))
