"""`localragas view`: the run history (run/history.py) as one self-contained HTML page, offline like the report
(report/html_report.py: inline CSS allowed by its hash in a Content-Security-Policy, no script, no request; its head
templates/head.html): each metric's mean and interval over time per dataset content (dataset_key: the same samples
wherever they were read) with the gate thresholds (dashboard_svg.py), the table of runs, two runs side by side
(paired differences with intervals from their stored per-sample scores, quality/compare.py, drawn as `compare --html`
draws them, comparison_html.py; the samples that moved most, each with the one-line evidence behind its score in each
run's stored JSON report, report/evidence.py `brief`) and each run against the one before it on its dataset (never
another dataset's run). `localragas view --serve` shows it on 127.0.0.1 (dashboard_server.py), made anew at each request.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Sequence

from markupsafe import Markup

from ..core.errors import DamagedRunError, HistoryError, LocalragasError
from ..core.number_text import interval_text, score_text
from ..quality.compare import Comparison, compare_reports
from ..run.history import History, RunRecord
from ..data.schema import Report
from ..run.history_record import as_report
from .comparison_html import differences_svg
from .dashboard_svg import trend_svg
from .evidence import brief, definition_in
from .html_report import TEMPLATES, _asset, _sha256
from .json_report import read_json
from .svg import STYLE

PREVIOUS = 20  # the newest runs shown against the run before them on their dataset


def dataset_key(run: RunRecord) -> str:
    """The series a run belongs to: its dataset's content, the digest of its sample ids (each given, or made from its
    question, data/sample_record.py content_id), so the same test set at two paths, through evaluate(), or answered
    anew by another version of the RAG system is one series; a set with samples added or removed starts another.
    (A record without it: its data's sha256, else its path.)"""
    return run.ids_sha256 or run.dataset_sha256 or run.dataset or "?"


def _source(run: RunRecord) -> str:
    return run.dataset or "evaluate()"


def series_label(group: Sequence[RunRecord]) -> str:
    """A series' heading: where its runs read the samples (each path as given, evaluate()), how many, its digest."""
    newest = group[-1]
    where = ", ".join(dict.fromkeys(_source(r) for r in reversed(group)))
    return f"{where} · {newest.rows} samples · content {dataset_key(newest)[:12]}"


def _compare(history: History, base: RunRecord, new: RunRecord) -> Comparison:
    old, now = (as_report(run, history.scores(run.id)) for run in (base, new))  # type: ignore[arg-type]
    return compare_reports(old, now, base_name=f"run {base.id}", new_name=f"run {new.id}")


def stored_report(run: RunRecord, reports: dict[int | None, Report | str]) -> Report | str:
    """The run's JSON report as recorded in the history (read once a page: `reports` keeps it by run id), or one
    line saying why it cannot be read (none written, gone, unreadable)."""
    if run.id not in reports:
        where = run.outputs.get("json")
        if not where:
            reports[run.id] = f"run {run.id}: no JSON report was written (eval --out FILE.json keeps the evidence)"
        else:
            try:
                reports[run.id] = read_json(where)
            except (LocalragasError, OSError, ValueError) as e:
                why = " ".join(str(e).split())[:160]
                reports[run.id] = (f"run {run.id}: its report {where} is gone" if not Path(where).exists() else
                                   f"run {run.id}: its report {where} could not be read ({why})")
    return reports[run.id]


def _evidence(report: Report | str, metric: str, sample_id: str) -> str:
    """The one-line evidence of a sample's metric in a run's report, or why there is none."""
    if isinstance(report, str):
        return report
    sample = next((s for s in report.samples if s.id == sample_id), None)
    if sample is None or metric not in sample.metrics:
        return f"sample {sample_id} has no {metric} in the report"
    return brief(definition_in(report, metric), sample.metrics[metric])


def _side(c: Comparison, base: RunRecord, new: RunRecord, reports: dict[int | None, Report | str]) -> dict[str, Any]:
    """A comparison as the page shows it: the two runs, the method differences first, each metric's change and the
    samples that moved most with their evidence in each run's report."""
    have = {run.id: stored_report(run, reports) for run in (base, new)} if any(c.largest_changes.values()) else {}
    return {"base": base, "new": new, "cards": [("base", _card(base)), ("new", _card(new))],
            "warnings": [*(d.text for d in c.method_differences), *c.warnings],
            "svg": Markup(differences_svg(c)),
            "metrics": [{"metric": m.metric, "base": score_text(m.base_mean), "new": score_text(m.new_mean),
                         "diff": score_text(m.diff, signed=True), "pairs": m.pairs, "verdict": m.verdict,
                         "ci": interval_text(m.ci_low, m.ci_high, form="ellipsis", signed=True)} for m in c.metrics],
            "moved": {metric: [{"id": s.id, "base": score_text(s.base), "new": score_text(s.new),
                                "diff": score_text(s.diff, signed=True),
                                "evidence": [(label, _evidence(have[run.id], metric, s.id))
                                             for label, run in (("base", base), ("new", new))]}
                                for s in changes]
                      for metric, changes in c.largest_changes.items() if changes},
            "only": (len(c.only_in_base), len(c.only_in_new))}


def _side_of(history: History, base: RunRecord, new: RunRecord, reports: dict[int | None, Report | str]
             ) -> dict[str, Any] | None:
    """The two runs side by side (_side), or None when either's stored scores are damaged: named in
    history.damaged, the page goes on without that comparison."""
    try:
        return _side(_compare(history, base, new), base, new, reports)
    except DamagedRunError as e:
        if str(e) not in history.damaged:
            history.damaged.append(str(e))
        return None


def _card(run: RunRecord) -> list[tuple[str, str]]:
    """A run as the side-by-side shows it: what it measured and how."""
    return [("run", f"{run.id} · {run.started}" + (f" · {run.name}" if run.name else "")),
            ("dataset", f"{run.dataset or 'evaluate()'} ({(run.dataset_sha256 or '?')[:12]}, {run.rows} rows)"),
            ("judge", f"{run.judge.get('name', '?')} ({str(run.judge.get('fingerprint', '?'))[:24]})"),
            ("calibration", (run.calibration or {}).get("source") or "none"),
            ("prompts", run.prompts.get("digest") or "?"), ("localragas", run.version or "?"),
            ("verdict", run.verdict)]


def _pair(runs: Sequence[RunRecord], pair: tuple[int, int] | None) -> tuple[RunRecord, RunRecord] | str | None:
    """The two runs shown side by side: `pair` (base id, new id), else the newest run and the one before it on its
    dataset (its series, dataset_key); where it has none, the line that says so (no run of another dataset is put
    beside it); None with fewer than two runs."""
    by_id = {r.id: r for r in runs}
    if pair is not None:
        missing = [i for i in pair if i not in by_id]
        if missing:
            raise HistoryError(f"view --compare: no run {missing[0]} among the runs shown (`localragas runs` lists "
                               "them)")
        return by_id[pair[0]], by_id[pair[1]]
    if len(runs) < 2:
        return None
    newest = runs[0]
    before = _before(runs, 0)
    if before is None:
        return (f"The newest run, {newest.id}, is the first shown of its dataset ({_source(newest)}, content "
                f"{dataset_key(newest)[:12]}): there is no run before it to put beside it. Choose two runs with "
                "localragas view --compare BASE NEW.")
    return before, newest


def _before(runs: Sequence[RunRecord], i: int) -> RunRecord | None:
    """The run before runs[i] (newest first) on its dataset, if one is shown."""
    return next((r for r in runs[i + 1:] if dataset_key(r) == dataset_key(runs[i])), None)


def _row(run: RunRecord) -> dict[str, Any]:
    """A run in the table: long paths as their file name (the whole path in its title), so the table fits."""
    report = run.outputs.get("json") or run.outputs.get("html") or ""
    return {"run": run, "dataset": Path(run.dataset).name if run.dataset else "evaluate()",
            "dataset_title": f"{_source(run)} · content {dataset_key(run)[:12]}",
            "started": run.started.replace("T", " ")[:16],
            "means": {m.metric: (score_text(m.mean), interval_text(m.ci_low, m.ci_high), m.status or "")
                      for m in run.metrics},
            "calibration": (run.calibration or {}).get("source") or "none",
            "checked": ", ".join(f"{m} {c['labelled']}/{c['items']}" for m, c in run.checked.items()),
            "report": Path(report).name if report else "", "report_path": report}


def page_parts(history: History, *, dataset: str | None = None, tag: str | None = None, name: str | None = None,
               limit: int | None = None, pair: tuple[int, int] | None = None) -> dict[str, Any]:
    """What the page shows, from the history's runs (newest first; filtered as `localragas runs` filters)."""
    runs = history.runs(dataset=dataset, tag=tag, name=name, limit=limit)
    groups: dict[str, list[RunRecord]] = {}
    for run in reversed(runs):  # oldest first in each trend
        groups.setdefault(dataset_key(run), []).append(run)
    trends = [{"dataset": series_label(group), "runs": len(group),
               "charts": [{"metric": m, "svg": Markup(trend_svg(m, group))}
                          for m in dict.fromkeys(x.metric for r in group for x in r.metrics)]}
              for group in groups.values()]
    chosen = _pair(runs, pair)
    reports: dict[int | None, Report | str] = {}
    side = _side_of(history, *chosen, reports) if isinstance(chosen, tuple) else None
    previous = []
    for i, run in enumerate(runs[:PREVIOUS]):
        before = _before(runs, i)
        if before is not None and (not isinstance(chosen, tuple) or (before.id, run.id) != (chosen[0].id,
                                                                                              chosen[1].id)):
            previous.append(_side_of(history, before, run, reports))
    previous = [p for p in previous if p is not None]
    metrics = list(dict.fromkeys(m.metric for r in runs for m in r.metrics))
    return {"runs": [_row(r) for r in runs], "metrics": metrics, "trends": trends, "side": side,
            "side_note": chosen if isinstance(chosen, str) else "",
            "previous": previous, "total": history.count(), "path": str(history.path), "damaged": history.damaged,
            "filters": ", ".join(f"{k} {v}" for k, v in (("dataset", dataset), ("tag", tag), ("name", name)) if v)}


def render_dashboard(history: History, **filters: Any) -> str:
    """The page (filters: page_parts's)."""
    style = STYLE + _asset("dashboard.css")  # the differences are drawn as compare --html draws them (svg.plot)
    if "</" in style:
        raise RuntimeError("localragas/report/html/dashboard.css must not contain '</'")
    csp = (f"default-src 'none'; style-src '{_sha256(style)}'; img-src data:; base-uri 'none'; "
           "form-action 'none'")
    made = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    from .. import __version__  # noqa: PLC0415

    parts = page_parts(history, **filters)
    return TEMPLATES.get_template("dashboard.html").render(
        csp=Markup(csp), style=Markup(style), made=made, version=__version__,
        title=f"localragas runs — {len(parts['runs'])} run(s)", **parts)
