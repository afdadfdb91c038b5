"""What the HTML report's "checked by people" panel shows (report.spot_checks, docs/spot-checks.md): per checked
metric the judge against the people (accuracy, balanced accuracy, ROC AUC with intervals and counts, the judge's
bias), the three means with intervals and the effective number of labels, the gate's three-way reading, and the items
the judge and the people disagree on with the people's notes. Values only: the markup is parts/checked.html, rendered
with every text escaped (html_report.py)."""
from __future__ import annotations

from typing import Any

from ..core.number_text import count_text, interval_text, score_text
from ..data.schema import Report
from ..data.spot_check_models import Figure, MetricSpotCheck, PPIResult
from .spot_checks_terminal import reading_text

DISAGREEING_SHOWN = 50  # items listed per metric (the JSON report has them all)


def _figure(name: str, f: Figure) -> dict[str, Any]:
    return {"name": name, "value": score_text(f.value) if f.value is not None else "—",
            "ci": interval_text(f.ci_low, f.ci_high) if f.ci_low is not None and f.ci_high is not None else "",
            "n": f.n, "note": f.note or ""}


def _mean(name: str, p: PPIResult) -> dict[str, Any]:
    return {"name": name, "value": score_text(p.mean) if p.mean is not None else "—",
            "ci": interval_text(p.ci_low, p.ci_high) if p.ci_low is not None and p.ci_high is not None else "",
            "n": p.n, "note": p.note or ""}


def _metric(name: str, c: MetricSpotCheck) -> dict[str, Any]:
    labelled = f"{count_text(c.draws, 'labelled draw')} of {c.population} ({', '.join(c.reviewers) or 'no reviewer'})"
    if c.skipped:
        labelled += f", {c.skipped} skipped"
    if c.not_drawn:
        labelled += f", {c.not_drawn} labelled out of the draws (in the judge-vs-people figures only)"
    facts = []
    if c.bias is not None:
        facts.append(f"judge bias {c.bias:+.3f} (the judge's mean minus the people's on the labelled draws)")
    if c.ppi_mean.effective_labels is not None:
        facts.append(f"the judge is worth about {c.ppi_mean.effective_labels:.0f} labels (effective number of labels)")
    if c.disagreements:
        facts.append(f"{count_text(c.disagreements, 'item')} the reviewers disagree on"
                     + (f", Cohen's kappa {score_text(c.kappa)}" if c.kappa is not None else ""))
    reading = c.gate.reading if c.gate and c.trustworthy else "none"
    shown = c.disagreeing[:DISAGREEING_SHOWN]
    return {"metric": name, "labelled": labelled,
            "figures": [_figure("accuracy", c.accuracy), _figure("balanced accuracy", c.balanced_accuracy),
                        _figure("ROC AUC", c.roc_auc)],
            "means": [_mean("judge only", c.judge_mean), _mean("labels only", c.labels_mean),
                      _mean("prediction-powered", c.ppi_mean)],
            "facts": facts, "reading": reading,
            "reading_text": reading_text(c) if c.trustworthy else f"not used by the gate: {c.note or ''}",
            "disagreeing": [{"sample": d.sample_id, "text": d.text, "judge": score_text(d.judge_score),
                             "people": score_text(d.label), "reviewers": ", ".join(d.reviewers),
                             "notes": d.notes} for d in shown],
            "more": len(c.disagreeing) - len(shown)}


def checked_by_people(report: Report) -> dict[str, Any] | None:
    """The panel's values, or None for a report without people's labels."""
    checks = report.spot_checks
    if checks is None or not checks.metrics:
        return None
    return {"files": ", ".join(checks.files), "labels": checks.labels, "minimum": checks.minimum,
            "metrics": [_metric(name, c) for name, c in checks.metrics.items()]}
