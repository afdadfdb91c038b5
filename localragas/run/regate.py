"""A report's gate from its per-sample results (no judging), beside the gate itself (run/gate.py): `gate_report` gates a
run's report once, as the run built it (run/runner.py); `regate` gates a report read back from disk again, its
settings defaulting to the ones it records (`localragas report`, `merge`, `compare`)."""
from __future__ import annotations

from typing import Any

from ..core.errors import ConfigError
from ..data.metric_definition import GIVEN
from ..data.schema import Report
from ..metrics.report_definitions import definitions_of
from .canaries import failures as canary_failures
from .gate import people_reading, run_gate
from .judge_check import flat_metrics
from .results import columns_of
from .stats import categories_of, ci_settings, summarise_columns

IN_PYTHON = "set in Python"  # a threshold given to RunSettings(...) itself, not through a layer (RunSettings.over)


def run_thresholds(report: Report) -> dict[str, float]:
    """The thresholds a report's run recorded (meta.thresholds: eval's flags over localragas.toml over the defaults,
    recorded with --no-gate too); a report that records none gets the defaults of its metrics' definitions, never an
    empty gate."""
    if "thresholds" in report.meta:
        return dict(report.meta["thresholds"] or {})
    covered = _covered(report)
    chosen = {n: d.default_threshold(covered) for n, d in definitions_of(report).items()}
    return {n: t for n, t in chosen.items() if t is not None}


def _covered(report: Report) -> list[str]:
    """The prompt families the run's calibration covered (meta.calibration.families)."""
    return list(((report.meta.get("calibration") or {}).get("families")) or {})


def regate(report: Report, thresholds: dict[str, float] | None = None, gate_on: str | None = None,
           enabled: bool | None = None, max_error_rate: float | None = None,
           overrides: dict[str, float] | None = None, overrides_origin: str = "set with -t") -> Report:
    """Recompute a report's aggregates, intervals and gate from its per-sample results (no judging).

    thresholds: the full set to apply (default: the run's own, run_thresholds); overrides: thresholds over that set
    (`report -t`, `merge -t`), set where overrides_origin says; gate_on / enabled / max_error_rate: default the
    report's own. The metrics' directions and gate messages are the report's definitions (definitions_of), which the
    result then stores; a threshold that is not its metric's default is said to be set where meta.threshold_origins
    says.
    """
    limits = {**(run_thresholds(report) if thresholds is None else thresholds), **(overrides or {})}
    origins = {**(report.meta.get("threshold_origins") or {}), **{n: overrides_origin for n in overrides or {}}}
    return gate_report(report, limits, origins, gate_on=gate_on or report.gate.on,
                       enabled=report.gate.enabled if enabled is None else enabled,
                       max_error_rate=report.gate.max_error_rate if max_error_rate is None else max_error_rate)


def gate_report(report: Report, limits: dict[str, float], origins: dict[str, str], *, gate_on: str, enabled: bool,
                max_error_rate: float) -> Report:
    """The report with its aggregates, intervals and gate computed from its per-sample results: `limits` the
    thresholds applied (each a metric of the report, else ConfigError), `origins` where each was set
    (meta.threshold_origins); people's spot checks (report.spot_checks), when attached, gate the metrics they hold
    enough labels for, and each gets its reading at its threshold."""
    names = report.metrics
    unknown = sorted(set(limits) - set(names))
    if unknown:
        raise ConfigError(f"threshold for metric(s) not in this report: {', '.join(unknown)}; it has {', '.join(names)}")
    definitions = definitions_of(report)
    problems = {n: d.problem for n, d in definitions.items() if d.problem}
    lower = {n for n, d in definitions.items() if not d.higher_is_better}
    columns = columns_of(report.samples, names)  # a run's carry them; else one pass over the results
    summary = summarise_columns(columns, names)
    categories = categories_of(columns, names)
    for s in [*summary, *(s for rows in categories.values() for s in rows)]:
        s.higher_is_better = s.metric not in lower
    covered = _covered(report)
    origins = {n: o for n, o in origins.items() if n in limits}
    sources = {n: _source(definitions[n].threshold_basis(t, covered), origins.get(n))
               for n, t in limits.items() if n in definitions}
    checks = report.spot_checks
    gate = run_gate(summary, limits, problems, enabled=enabled, on=gate_on, lower_is_better=lower,
                    max_error_rate=max_error_rate,
                    judge_failures={**flat_metrics(report, definitions), **canary_failures(report)}, sources=sources,
                    people=checks.metrics if checks else None)
    conversations, turns = columns.conversation_counts()
    meta = {**report.meta, "thresholds": limits, "threshold_origins": origins, "ci": ci_settings(conversations > 0)}
    meta.pop("conversations", None)
    if conversations:  # what the report's readers look for before they summarise conversations (one pass)
        meta["conversations"] = {"conversations": conversations, "turns": turns}
    update: dict[str, Any] = {"definitions": definitions, "summary": summary, "by_category": categories, "gate": gate,
                              "meta": meta}
    if checks is not None:  # each checked metric's three-way reading at its threshold as now set
        update["spot_checks"] = checks.model_copy(update={"metrics": {
            m: c.model_copy(update={"gate": people_reading(c, limits[m], m not in lower) if m in limits else None})
            for m, c in checks.metrics.items()}})
    return report.model_copy(update=update)


def _source(basis: str, origin: str | None) -> str:
    """Why a threshold applies: its default's basis, or where it was set (a report written before origins were
    recorded: "given")."""
    return origin if basis == GIVEN and origin else basis
