"""What the static parts of the HTML report show: header, gate verdict, metric cards with histograms, by-category
table, sample-table skeleton, skipped rows, run metadata. Values only: the markup is in report/templates/parts/,
rendered with every text escaped (html_report.py)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from ..judges.calibration_map import uncalibrated_note
from ..core.number_text import count_text, interval_text, percent_text, score_text, seconds_text, threshold_text
from ..data.schema import GateResult, MetricSummary, Report, SampleResult
from ..run.canaries import canary_line
from ..run.judge_check import check_details, check_line
from ..run.results import columns_of
from ..run.score_columns import ScoreColumns
from .html_chart import histogram_svg
from .html_spot_checks import checked_by_people

STATUS = {  # gate status -> (symbol, words): colour is never the only carrier of meaning
    "passed": ("✓", "meets threshold"),
    "failed": ("✗", "below threshold"),
    "not_evaluated": ("?", "not evaluated"),
    "error": ("!", "could not evaluate"),
    None: ("–", "no threshold"),
}


def _ci(obj: object) -> tuple[float, float] | None:
    lo, hi = getattr(obj, "ci_low", None), getattr(obj, "ci_high", None)
    return None if lo is None or hi is None else (lo, hi)


def header(report: Report, kinds: tuple[int, int] = (0, 1)) -> dict[str, Any]:
    """kinds: the page's conversations and single samples (page_kinds)."""
    m = report.meta
    facts = [count_text(len(report.samples), "sample")]
    if m.get("dataset"):
        facts.append(f"dataset {m['dataset']}")
    if (m.get("judge") or {}).get("name"):
        facts.append(f"judge {m['judge']['name']}")
    if (m.get("embedder") or {}).get("name"):
        facts.append(f"embedder {m['embedder']['name']}")
    if m.get("started"):
        facts.append(f"started {m['started']}")
    if m.get("wall_seconds") is not None:
        facts.append(seconds_text(m["wall_seconds"]))
    facts += [line for line in (check_line(m), check_details(m), canary_line(m)) if line]
    nav = [("verdict", "Verdict"), ("metrics", "Metrics")]
    if report.spot_checks is not None and report.spot_checks.metrics:
        nav.append(("checked", "Checked by people"))
    if report.by_category:
        nav.append(("categories", "By category"))
    conversations, singles = kinds
    if conversations:
        nav.append(("conversations", "Conversations"))
    if singles or not conversations:
        nav.append(("samples", "Samples"))
    if report.skipped:
        nav.append(("skipped", "Skipped rows"))
    nav.append(("run", "Run metadata"))
    return {"facts": facts, "nav": nav, "note": uncalibrated_note(m)}


def verdict(report: Report) -> dict[str, Any]:
    gate = report.gate
    failed = [g for g in gate.results if g.status == "failed"]
    pending = [g for g in gate.results if g.status == "not_evaluated"]
    on_bound = getattr(gate, "on", "mean") == "lower-bound"
    basis = "the lower bound of each metric's 95% confidence interval" if on_bound else "each metric's mean"
    if not gate.enabled:
        cls, icon, title = "off", "–", "Quality gate off"
        text = "Report only: no metric can fail the run (thresholds are still shown)."
    elif gate.passed:
        cls, icon, title = "passed", "✓", "Quality gate passed"
        text = (f"All {count_text(len(gate.results), 'metric')} with a threshold meet it "
                f"(compared: {basis})." if gate.results else "No metric has a threshold.")
    else:
        cls, icon, title = "failed", "✗", "Quality gate FAILED"
        text = f"{len(failed)} of {len(gate.results)} metrics below threshold (compared: {basis})."
    if not gate.evaluated:
        cls, icon, title = "failed", "!", "Could not evaluate" + (": quality gate FAILED" if gate.enabled else "")
        text = (f"Errors (judge, cache, embedder, I/O) left samples unscored beyond the max error rate "
                f"({percent_text(gate.max_error_rate)}), or left no scored sample: the gate fails closed."
                + (f" {text}" if gate.enabled and failed else ""))
    items = [("not_evaluated", "! errors accepted", x.message) if x.allowed
             else ("error", "! could not evaluate", x.message) for x in gate.errors]
    items += [("failed", "✗ failed", g.message) for g in failed]
    items += [("neutral", "? not evaluated", g.message) for g in pending]
    return {"cls": cls, "icon": icon, "title": title, "text": text, "items": items}


def metric_card(report: Report, s: MetricSummary, g: GateResult | None, definition: str,
                values: list[float]) -> dict[str, Any]:
    status = g.status if g else None
    symbol, words = STATUS.get(status, STATUS[None])
    ci = _ci(s)
    on_bound = getattr(report.gate, "on", "mean") == "lower-bound"
    hib = getattr(s, "higher_is_better", True)  # False: noise sensitivity, lower is better
    if not hib and status == "failed":
        words = "above threshold"
    bound = " (CI lower bound)" if hib else " (CI upper bound)"
    threshold = f"{'≥' if hib else '≤'} {threshold_text(g.threshold)}" + (bound if on_bound else "") if g else "none"
    if status is None and any(x.metric == s.metric and not x.allowed for x in report.gate.errors):
        status = "error"  # no threshold, yet it could not be evaluated
        symbol, words = STATUS["error"]
    compared = getattr(g, "compared", None) if g else None
    card = {"metric": s.metric, "status": status or "none", "tag": status or "neutral", "symbol": symbol,
            "words": words, "lower": not hib, "definition": definition, "mean": score_text(s.mean),
            "ci_text": f"95% CI {interval_text(s.ci_low, s.ci_high)}", "ci": ci, "threshold": threshold,
            "compared": score_text(compared) if on_bound and compared is not None else None, "scored": s.scored,
            "unscored": s.unscored, "reasons": list(s.unscored_reasons.items()), "errors": s.errors,
            "first_error": s.first_error or "", "chart": None}
    if values:
        t = g.threshold if g else None
        below = sum(1 for v in values if t is not None and (v < t if hib else v > t))
        card["chart"] = Markup(histogram_svg(s.metric, values, t, s.mean, ci))  # drawn and escaped in html_chart.py
        card["chart_note"] = (f"{below} of {len(values)} scored samples {'below' if hib else 'above'} "
                              f"{threshold_text(t)}" if t is not None else f"{len(values)} scored samples")
    return card


def metric_cards(report: Report, columns: ScoreColumns) -> list[dict[str, Any]]:
    gate = {g.metric: g for g in report.gate.results}
    defs = report.definitions  # html_pieces completed them (metrics.definitions_of)
    return [metric_card(report, s, gate.get(s.metric), defs[s.metric].definition if s.metric in defs else "",
                        columns.values(s.metric).tolist() if s.metric in columns.metrics else [])
            for s in report.summary]


def categories(report: Report, columns: ScoreColumns) -> dict[str, Any] | None:
    if not report.by_category:
        return None
    limits = {g.metric: g.threshold for g in report.gate.results}
    rows, counts = [], columns.category_counts()
    for cat, summaries in report.by_category.items():
        cells = []
        for s in summaries:
            t = limits.get(s.metric)
            ci = _ci(s)
            low = s.mean is not None and t is not None and (s.mean < t if s.higher_is_better else s.mean > t)
            cells.append({"mean": score_text(s.mean), "unscored": s.unscored, "low": low,
                          "ci": interval_text(*ci) if ci else None})
        rows.append({"category": cat, "samples": counts.get(cat, 0), "cells": cells})
    head = [("category", ""), ("samples", "num"), *((m, "num") for m in report.metrics)]  # (label, class)
    return {"head": head, "rows": rows}


def page_kinds(samples: Iterable[SampleResult]) -> tuple[int, int]:
    """How many conversations and single samples the page embeds (a conversation: the turns of one id)."""
    conversations, singles = set(), 0
    for s in samples:
        if s.turn is None:
            singles += 1
        else:
            conversations.add(s.turn.conversation)
    return len(conversations), singles


def _metric_columns(report: Report) -> list[tuple[str, str, str]]:
    return [(f"m:{i}", m, "num") for i, m in enumerate(report.metrics)]  # app.js: metrics[i]


def samples_section(report: Report, columns: ScoreColumns, shown: str = "",
                    kinds: tuple[int, int] = (0, 1)) -> dict[str, Any] | None:
    """The sample table's columns; shown: what the table holds of a large report's samples (html_report.embedded);
    kinds: the page's conversations and single samples (a conversation's turns are in the conversation table)."""
    if not report.samples or not kinds[1]:
        return None
    cats = columns.categories
    cols = [("id", "sample", ""), ("category", "category", "")] if cats else [("id", "sample", "")]
    cols += _metric_columns(report)
    cols += [("calls", "judge calls", "num"), ("seconds", "seconds", "num")]
    return {"categories": bool(cats), "columns": cols, "shown": shown}


def conversations_section(report: Report, shown: str, kinds: tuple[int, int]) -> dict[str, Any] | None:
    """The conversation table's columns (app.js fills a row per conversation: each metric's mean over its turns and
    its worst turn), or None without a conversation."""
    if not kinds[0]:
        return None
    cols = [("id", "conversation", ""), ("turns", "turns", "num"), *_metric_columns(report)]
    return {"columns": cols, "shown": shown}


_GROUPS = [  # (title, meta keys); keys not named here end up under "Other"
    ("Run", ["localragas", "python", "started", "wall_seconds", "samples", "resumed_samples", "dataset",
             "ignored_fields", "config"]),
    ("Judge", ["judge", "judge_check", "canaries", "calibration", "uncalibrated"]),
    ("Judge usage", ["judge_stats", "judge_totals", "share_of_wall_in_judge", "judge_cache"]),
    ("Embedder", ["embedder"]),
    ("Thresholds", ["thresholds"]),
    ("Confidence intervals", ["ci"]),
    ("Versions", ["versions"]),
]


def run_metadata(report: Report) -> list[tuple[str, Any]]:
    """The run metadata in groups: (title, value), the value shown as nested definition lists (parts/run.html)."""
    meta = dict(report.meta)
    blocks = []
    for title, keys in _GROUPS:
        got = {k: meta.pop(k) for k in keys if k in meta}
        if len(got) == 1 and isinstance(next(iter(got.values())), dict):
            got = next(iter(got.values()))
        if got:
            blocks.append((title, got))
    if meta:
        blocks.append(("Other", meta))
    return blocks


def sections(report: Report, shown: str = "", page: Iterable[SampleResult] | None = None) -> dict[str, Any]:
    """What the templates under report/templates/parts/ show, by name: the figures of every sample (a run's score
    columns: run/score_columns.py), whatever share of them the page embeds (page: those samples, default all of
    them; shown: says which)."""
    columns = columns_of(report.samples, report.metrics)
    kinds = page_kinds(report.samples if page is None else page)
    return {"header": header(report, kinds), "verdict": verdict(report), "cards": metric_cards(report, columns),
            "checked": checked_by_people(report), "categories": categories(report, columns),
            "conversations": conversations_section(report, shown, kinds),
            "samples": samples_section(report, columns, shown, kinds),
            "skipped": report.skipped, "run": run_metadata(report)}
