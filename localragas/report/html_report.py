"""A self-contained, offline HTML report: one file with inline CSS, JS and SVG, the report data embedded as JSON.

The static parts are jinja2 templates (report/templates/: page.html, detail.html, and parts/ for the sections, fed
by html_sections.py) rendered with autoescaping, so every text is escaped; only the page's own assets, the embedded
JSON (escaped for a script element here) and the SVG histograms (html_chart.py) go in as markup. The sample table
and per-sample drill-down are built by html/app.js from the embedded JSON, only through textContent. A
Content-Security-Policy allows nothing but the page's own style and script (by hash): no network request, and
injected markup could not run even if it got in.
"""
from __future__ import annotations

import base64
import hashlib
import re
from importlib.resources import files
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from jinja2 import Environment, FunctionLoader, StrictUndefined
from markupsafe import Markup

from ..metrics.report_definitions import definitions_of
from ..data.schema import Report, SampleResult
from . import html_sections
from ..core.atomic_write import write_atomic
from .json_report import json_pieces
from ..run.results import columns_of
from ..run.score_columns import ScoreColumns

HTML_SAMPLES = 2000  # samples a page embeds at most: past it, the first and the worst (embedded_samples)


def _asset(name: str) -> str:
    return files("localragas.report").joinpath("html").joinpath(name).read_text(encoding="utf-8")


def _template(name: str) -> str:
    """A template's text; in parts/ each line break and the indentation after it are dropped, so the sections'
    markup is written one element a line and comes out on one line (a space that matters stays inside a line)."""
    text = files("localragas.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")
    return re.sub(r"\n[ \t]*", "", text) if name.startswith("parts/") else text


TEMPLATES = Environment(loader=FunctionLoader(_template), autoescape=True, undefined=StrictUndefined,
                        keep_trailing_newline=True)
TEMPLATES.tests.update(dict=lambda v: isinstance(v, dict), list=lambda v: isinstance(v, list))


def script_safe(json_text: str) -> str:
    """JSON text safe inside <script type="application/json">: no '<', '>' or '&' survives unescaped, so a text
    holding '</script>' or '<!--' cannot end the element."""
    return json_text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _embed_pieces(report: Report) -> Iterator[str]:
    for text in json_pieces(report, indent=None):
        yield script_safe(text)


def embed_json(report: Report) -> str:
    """The report as JSON safe inside <script type="application/json">: no '<', '>' or '&' survives unescaped,
    so sample text holding '</script>' or '<!--' cannot end the element."""
    return "".join(_embed_pieces(report))


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _title(report: Report) -> str:
    gate = report.gate
    verdict = "gate off" if not gate.enabled else ("passed" if gate.passed else "FAILED")
    if not gate.evaluated:
        verdict = "could not evaluate" + ("" if not gate.enabled else ", FAILED")
    name = report.meta.get("dataset")
    return f"localragas report — {Path(str(name)).name + ' — ' if name else ''}{verdict}"


def render_html(report: Report) -> str:
    return "".join(html_pieces(report))


def html_pieces(report: Report) -> Iterator[str]:
    """The page of render_html() in pieces, its embedded data one sample at a time (a large report is never one
    string in memory). The metric cards and the drill-down read the report's metric definitions; one without them
    (made in Python, or written before reports stored them) gets the registry's (metrics.definitions_of)."""
    report = report.model_copy(update={"definitions": definitions_of(report)})
    embedded, shown = embedded_samples(report)
    style, script = _asset("style.css"), _asset("app.js")
    if "</" in style + script:  # an inlined asset must not be able to close its own element
        raise RuntimeError("localragas/report/html assets must not contain '</'")
    csp = (f"default-src 'none'; style-src '{_sha256(style)}'; script-src '{_sha256(script)}'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    page = TEMPLATES.get_template("page.html")
    yield from page.generate(
        csp=Markup(csp), title=_title(report), style=Markup(style), script=Markup(script),
        data=(Markup(piece) for piece in _embed_pieces(embedded)), version=report.meta.get("localragas") or "",
        **html_sections.sections(report, shown, embedded.samples))


def embedded_samples(report: Report, limit: int | None = None) -> tuple[Report, str]:
    """The report as the page embeds it, and what its tables then say they hold ("" when every sample): up to
    `limit` samples (HTML_SAMPLES) all of them; past it the first limit/2 and the worst limit/2 (by their lowest
    score, a lower-is-better metric's turned over, an error's unscored sample first), a conversation's turns always
    together (page_units). The metric cards and the category table show every sample's figures either way."""
    limit = HTML_SAMPLES if limit is None else limit
    n = len(report.samples)
    if n <= limit:
        return report, ""
    lower = {m for m, d in report.definitions.items() if not d.higher_is_better}
    units, cut = page_units(report.samples, limit // 2)
    unit_of = np.empty(n, dtype=np.int64)
    for u, positions in enumerate(units):
        unit_of[positions] = u
    for u, positions in cut.items():  # a long conversation's turns past the cut rank it too
        unit_of[positions] = u
    first: list[int] = []
    for positions in units:
        if len(first) + len(positions) > limit // 2:
            break
        first += positions
    picked_units = {int(unit_of[i]) for i in first}
    worst: list[int] = []
    for i in worst_first(columns_of(report.samples, report.metrics), lower):
        u = int(unit_of[i])
        if u in picked_units or len(first) + len(worst) + len(units[u]) > limit:
            continue
        picked_units.add(u)
        worst += units[u]
        if len(first) + len(worst) == limit:
            break
    picked = sorted(first + worst)
    tables = "table holds"
    whole = ""
    if len(units) < n or cut:
        tables = "tables hold"
        whole = ", each conversation with all its turns"
        if cut:
            whole += (f" (but {len(cut):,} conversation(s) of more than {limit // 2:,} turns with their first "
                      f"{limit // 2:,} only)")
    shown = (f"The {tables} {len(picked):,} of the {n:,} samples: the first {len(first):,} and the "
             f"{len(worst):,} worst (lowest score of any metric, errors first){whole}; the figures above count "
             "every sample, the JSON and CSV reports hold them all.")
    return report.model_copy(update={"samples": [report.samples[i] for i in picked]}), shown


def page_units(samples: Sequence[SampleResult], longest: int) -> tuple[list[list[int]], dict[int, list[int]]]:
    """The positions a large report's page embeds or leaves out together, in the run's order: each conversation's
    turns as one unit, each single sample as one; a conversation of more than `longest` turns kept to its first
    `longest` (cut: its unit's index -> the positions left out)."""
    units: list[list[int]] = []
    unit_of: dict[str, int] = {}
    for i, s in enumerate(samples):
        if s.turn is None:
            units.append([i])
        elif s.turn.conversation in unit_of:
            units[unit_of[s.turn.conversation]].append(i)
        else:
            unit_of[s.turn.conversation] = len(units)
            units.append([i])
    cut = {u: positions[longest:] for u, positions in enumerate(units) if len(positions) > longest}
    return [positions[:longest] for positions in units], cut


def worst_first(columns: ScoreColumns, lower: set[str]) -> np.ndarray:
    """Positions from the worst sample on: an error's unscored sample first, then by the lowest score of any metric
    (1 - score for a lower-is-better one); a sample with neither last. Ties keep the run's order."""
    n = len(columns)
    key = np.full(n, np.inf)
    for name, c in columns.columns.items():
        v = c.value[:n]
        key = np.fmin(key, 1.0 - v if name in lower else v)
        key[c.error[:n]] = -1.0
    return np.argsort(key, kind="stable")


def write_html(report: Report, path: str | Path) -> None:
    write_atomic(path, html_pieces(report))
