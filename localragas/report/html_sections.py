"""The static parts of the HTML report, rendered in Python with every text escaped: header, gate verdict, metric
cards with histograms, by-category table, sample-table skeleton, skipped rows, run metadata."""
from __future__ import annotations

from html import escape
from typing import Any

from ..calibration_map import uncalibrated_note
from ..number_text import threshold_text
from ..schema import GateResult, MetricSummary, Report
from .html_chart import histogram_svg

STATUS = {  # gate status -> (symbol, words): colour is never the only carrier of meaning
    "passed": ("✓", "meets threshold"),
    "failed": ("✗", "below threshold"),
    "not_evaluated": ("?", "not evaluated"),
    "error": ("!", "could not evaluate"),
    None: ("–", "no threshold"),
}


def e(x: object) -> str:
    return escape(str(x), quote=True)


def num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _ci(obj: object) -> tuple[float, float] | None:
    lo, hi = getattr(obj, "ci_low", None), getattr(obj, "ci_high", None)
    return None if lo is None or hi is None else (lo, hi)


def header(report: Report) -> str:
    m = report.meta
    facts = [f"{len(report.samples)} sample{'s' if len(report.samples) != 1 else ''}"]
    if m.get("dataset"):
        facts.append(f"dataset {m['dataset']}")
    if (m.get("judge") or {}).get("name"):
        facts.append(f"judge {m['judge']['name']}")
    if (m.get("embedder") or {}).get("name"):
        facts.append(f"embedder {m['embedder']['name']}")
    if m.get("started"):
        facts.append(f"started {m['started']}")
    if m.get("wall_seconds") is not None:
        facts.append(f"{m['wall_seconds']:.1f} s")
    nav = [("verdict", "Verdict"), ("metrics", "Metrics")]
    if report.by_category:
        nav.append(("categories", "By category"))
    nav.append(("samples", "Samples"))
    if report.skipped:
        nav.append(("skipped", "Skipped rows"))
    nav.append(("run", "Run metadata"))
    links = "".join(f'<a href="#{k}">{e(v)}</a>' for k, v in nav)
    note = uncalibrated_note(m)
    warning = f'<p class="facts uncalibrated">⚠ {e(note)}</p>' if note else ""
    return (f'<header class="top"><div><h1>localragas report</h1><p class="facts">{" · ".join(e(f) for f in facts)}'
            f'</p>{warning}</div><nav aria-label="sections">{links}</nav></header>')


def verdict(report: Report) -> str:
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
        text = (f"All {len(gate.results)} metric{'s' if len(gate.results) != 1 else ''} with a threshold meet it "
                f"(compared: {basis})." if gate.results else "No metric has a threshold.")
    else:
        cls, icon, title = "failed", "✗", "Quality gate FAILED"
        text = f"{len(failed)} of {len(gate.results)} metrics below threshold (compared: {basis})."
    if not gate.evaluated:
        cls, icon, title = "failed", "!", "Could not evaluate" + (": quality gate FAILED" if gate.enabled else "")
        text = (f"Errors (judge, cache, embedder, I/O) left samples unscored beyond the max error rate "
                f"({gate.max_error_rate:.0%}), or left no scored sample: the gate fails closed."
                + (f" {text}" if gate.enabled and failed else ""))
    items = "".join(f'<li><span class="tag {"not_evaluated" if x.allowed else "error"}">! '
                    f'{"errors accepted" if x.allowed else "could not evaluate"}</span> {e(x.message)}</li>'
                    for x in gate.errors)
    items += "".join(f'<li><span class="tag failed">✗ failed</span> {e(g.message)}</li>' for g in failed)
    items += "".join(f'<li><span class="tag neutral">? not evaluated</span> {e(g.message)}</li>' for g in pending)
    return (f'<section id="verdict" class="verdict {cls}" aria-label="quality gate verdict">'
            f'<div class="verdict-icon" aria-hidden="true">{icon}</div><div><h2>{e(title)}</h2><p>{e(text)}</p>'
            f'{f"<ul>{items}</ul>" if items else ""}</div></section>')


def _reasons(s: MetricSummary) -> str:
    if not s.unscored_reasons:
        return ""
    return "<ul class=\"reasons\">" + "".join(
        f"<li><code>{e(k)}</code> × {v}</li>" for k, v in s.unscored_reasons.items()) + "</ul>"


def metric_card(report: Report, s: MetricSummary, g: GateResult | None, definition: str) -> str:
    status = g.status if g else None
    symbol, words = STATUS.get(status, STATUS[None])
    values = [r.metrics[s.metric].value for r in report.samples
              if s.metric in r.metrics and r.metrics[s.metric].value is not None]
    ci = _ci(s)
    ci_text = f"95% CI {ci[0]:.3f}–{ci[1]:.3f}" if ci else "95% CI —"
    on_bound = getattr(report.gate, "on", "mean") == "lower-bound"
    hib = getattr(s, "higher_is_better", True)  # False: noise sensitivity, lower is better
    if not hib and status == "failed":
        words = "above threshold"
    bound = " (CI lower bound)" if hib else " (CI upper bound)"
    threshold = f"{'≥' if hib else '≤'} {threshold_text(g.threshold)}" + (bound if on_bound else "") if g else "none"
    facts = [("threshold", e(threshold)), ("scored", str(s.scored)), ("unscored", f"{s.unscored}{_reasons(s)}")]
    if s.errors:
        facts.append(("errors", f"{s.errors}: <code>{e(s.first_error or '')}</code>"))
    if status is None and any(x.metric == s.metric and not x.allowed for x in report.gate.errors):
        status = "error"  # no threshold, yet it could not be evaluated
        symbol, words = STATUS["error"]
    compared = getattr(g, "compared", None) if g else None
    if on_bound and compared is not None:
        facts.insert(1, ("compared", num(compared)))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    if values:
        t = g.threshold if g else None
        chart = histogram_svg(s.metric, values, t, s.mean, ci)
        below = sum(1 for v in values if t is not None and (v < t if hib else v > t))
        note = (f"{below} of {len(values)} scored samples {'below' if hib else 'above'} {threshold_text(t)}"
                if t is not None
                else f"{len(values)} scored samples")
        chart += f'<p class="chart-note">{e(note)} · <span class="key-mean">●</span> mean'
        chart += ' · <span class="key-ci">━</span> 95% CI</p>' if ci else "</p>"
    else:
        chart = '<p class="empty">No scored sample: nothing to chart.</p>'
    return (f'<article class="card metric {e(status or "none")}" id="metric-{e(s.metric)}">'
            f'<div class="card-head"><h3>{e(s.metric)}'
            + ('' if hib else ' <span class="muted">(lower is better)</span>')
            + f'</h3><span class="tag {e(status or "neutral")}">'
            f'{symbol} {words}</span></div>'
            + (f'<p class="definition">{e(definition)}</p>' if definition else "")
            + f'<p class="big"><span class="value">{num(s.mean)}</span><span class="unit">mean</span>'
              f'<span class="ci">{e(ci_text)}</span></p><dl class="facts">{dl}</dl><div class="chart">{chart}</div></article>')


def metric_cards(report: Report) -> str:
    gate = {g.metric: g for g in report.gate.results}
    defs = report.definitions  # html_pieces completed them (metrics.definitions_of)
    cards = "".join(metric_card(report, s, gate.get(s.metric), defs[s.metric].definition if s.metric in defs else "")
                    for s in report.summary)
    if not cards:
        cards = '<p class="empty">No metric was computed.</p>'
    return f'<section id="metrics"><h2>Metrics</h2><div class="cards">{cards}</div></section>'


def categories(report: Report) -> str:
    if not report.by_category:
        return ""
    limits = {g.metric: g.threshold for g in report.gate.results}
    head = "".join(f'<th scope="col" class="num">{e(m)}</th>' for m in report.metrics)
    rows = []
    for cat, summaries in report.by_category.items():
        n = sum(1 for r in report.samples if r.category == cat)
        cells = []
        for s in summaries:
            t = limits.get(s.metric)
            low = s.mean is not None and t is not None and (s.mean < t if s.higher_is_better else s.mean > t)
            mark = ' <span class="mark" title="below threshold">▼</span><span class="sr">below threshold</span>' if low else ""
            ci = _ci(s)
            tip = f' title="95% CI {ci[0]:.3f}–{ci[1]:.3f}"' if ci else ""
            extra = f' <span class="muted">({s.unscored} unscored)</span>' if s.unscored else ""
            cells.append(f'<td class="num{" below" if low else ""}"{tip}>{num(s.mean)}{mark}{extra}</td>')
        rows.append(f'<tr><th scope="row">{e(cat)}</th><td class="num">{n}</td>{"".join(cells)}</tr>')
    return (f'<section id="categories"><h2>By category</h2><p class="hint">Mean per category; '
            f'▼ marks a mean below the metric\'s threshold.</p><div class="table-wrap"><table class="data">'
            f'<thead><tr><th scope="col">category</th><th scope="col" class="num">samples</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def samples_section(report: Report) -> str:
    if not report.samples:
        return '<section id="samples"><h2>Samples</h2><p class="empty">No samples in this report.</p></section>'
    cats = sorted({s.category for s in report.samples if s.category})
    # the options are added by app.js from the embedded data (no round trip of category text through HTML)
    select = '<label>Category <select id="f-category"><option value="">all categories</option></select></label>' if cats else ""
    cols = [("id", "sample", ""), ("category", "category", "")] if cats else [("id", "sample", "")]
    cols += [(f"m:{i}", m, "num") for i, m in enumerate(report.metrics)]  # app.js: metrics[i]
    cols += [("calls", "judge calls", "num"), ("seconds", "seconds", "num")]
    head = "".join(f'<th scope="col" class="{c}" data-key="{e(k)}" aria-sort="none"><button type="button">{e(label)}'
                   f'<span class="arrow" aria-hidden="true"></span></button></th>' for k, label, c in cols)
    return (f'<section id="samples"><h2>Samples <span class="count" id="sample-count"></span></h2>'
            f'<div class="controls"><label>Search <input type="search" id="f-search" '
            f'placeholder="id, category, claim or question text…" autocomplete="off"></label>{select}'
            f'<label class="toggle"><input type="checkbox" id="f-failing"> only failing or unscored</label></div>'
            f'<p class="hint">Click a column header to sort, a row to see its evidence. ▼ marks a score below the '
            f'metric\'s threshold.</p><div class="table-wrap"><table class="data samples" id="sample-table">'
            f'<thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
            f'<p class="empty" id="no-match" hidden>No sample matches the filters.</p>'
            f'<noscript><p class="empty">The sample table and drill-down need JavaScript.</p></noscript></section>')


def skipped(report: Report) -> str:
    if not report.skipped:
        return ""
    rows = "".join(f"<tr><td>{e(r.path)}</td><td class=\"num\">{'' if r.line is None else r.line}</td>"
                   f"<td>{e(r.field or '')}</td><td>{e(r.reason)}</td></tr>" for r in report.skipped)
    return (f'<section id="skipped"><h2>Skipped input rows ({len(report.skipped)})</h2><div class="table-wrap">'
            f'<table class="data"><thead><tr><th scope="col">file</th><th scope="col" class="num">line</th>'
            f'<th scope="col">field</th><th scope="col">reason</th></tr></thead><tbody>{rows}</tbody></table></div>'
            f'</section>')


def kv(value: Any) -> str:
    """Any JSON-like value as nested definition lists (escaped)."""
    if isinstance(value, dict):
        if not value:
            return '<span class="muted">none</span>'
        return '<dl class="kv">' + "".join(f"<dt>{e(k)}</dt><dd>{kv(v)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, list):
        if not value:
            return '<span class="muted">none</span>'
        return '<ul class="plain">' + "".join(f"<li>{kv(v)}</li>" for v in value) + "</ul>"
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, float):
        return e(f"{round(value, 4):g}")
    return e(value)


_GROUPS = [  # (title, meta keys); keys not named here end up under "Other"
    ("Run", ["localragas", "python", "started", "wall_seconds", "samples", "resumed_samples", "dataset", "config"]),
    ("Judge", ["judge", "calibration", "uncalibrated"]),
    ("Judge usage", ["judge_stats", "judge_totals", "share_of_wall_in_judge", "judge_cache"]),
    ("Embedder", ["embedder"]),
    ("Thresholds", ["thresholds"]),
    ("Confidence intervals", ["ci"]),
    ("Versions", ["versions"]),
]


def run_metadata(report: Report) -> str:
    meta = dict(report.meta)
    blocks = []
    for title, keys in _GROUPS:
        got = {k: meta.pop(k) for k in keys if k in meta}
        if len(got) == 1 and isinstance(next(iter(got.values())), dict):
            got = next(iter(got.values()))
        if got:
            blocks.append(f'<div class="meta-group"><h3>{e(title)}</h3>{kv(got)}</div>')
    if meta:
        blocks.append(f'<div class="meta-group"><h3>Other</h3>{kv(meta)}</div>')
    body = "".join(blocks) or '<p class="empty">No run metadata.</p>'
    return (f'<section id="run"><details class="card"><summary><h2>Run metadata</h2><span class="hint">judge, '
            f'embedder, versions, timings, tokens</span></summary><div class="meta-grid">{body}</div></details></section>')
