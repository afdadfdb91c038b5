"""JUnit XML: each metric's gate is a test case, so CI systems show a failed metric like a failed test, and a metric
that could not be evaluated (errors left its samples unscored) as an errored test. A run of conversations adds a test
suite per conversation, a test case per turn holding its scores: a drill-down that never fails (the gate is on the
turn-level means, in the first suite), up to JUNIT_CONVERSATIONS conversations."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ..core.number_text import interval_text, score_text, threshold_text
from ..data.conversation_summary import conversation_groups, has_conversations, lower_metrics, mean_text, summarise
from ..data.schema import Report, SampleResult
from ..data.unscored import NOT_APPLICABLE, reason_kind
from ..run.canaries import canary_line
from ..run.judge_check import check_line
from ..core.atomic_write import write_atomic
from .evidence import brief, definition_in, lower_is_better, worst_samples
from .spot_checks_terminal import reading_text

JUNIT_CONVERSATIONS = 1000  # conversations given a test suite, in the report's order (CI pages slow down past it)
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (control characters from sample text would make the file unreadable)."""
    return _NOT_XML.sub("\ufffd", text)


def _details(report: Report, metric: str) -> str:
    s = report.summary_for(metric)
    lines = [f"mean {score_text(s.mean)}" if s.mean is not None else "no scored sample",
             f"95% CI {interval_text(s.ci_low, s.ci_high, form='ascii')}" if s.ci_low is not None else "",
             f"scored {s.scored}, unscored {s.unscored}"
             + (" (" + ", ".join(f"{k} {v}" for k, v in s.unscored_reasons.items()) + ")" if s.unscored_reasons else ""),
             f"unscored by an error: {s.errors}; the first: {s.first_error}" if s.errors else "",
             people_reading(report, metric)]
    worst = worst_samples(report, metric, 5)
    if worst:
        lines.append("highest-scoring samples (lower is better):" if lower_is_better(report, metric)
                     else "lowest-scoring samples:")
        lines += [f"  {smp.id}: {score_text(r.value)} - {brief(definition_in(report, metric), r)}" for smp, r in worst]
    return xml_text("\n".join(x for x in lines if x))


def people_reading(report: Report, metric: str) -> str:
    """The gate's three-way reading on the people's labels of the metric ("" without them): passes for sure, fails
    for sure, or undecided with about how many more labels would decide it."""
    c = report.spot_checks.metrics.get(metric) if report.spot_checks is not None else None
    if c is None:
        return ""
    if not c.trustworthy:
        return f"checked by people ({c.draws} labelled draws): not used by the gate: {c.note or ''}"
    p = c.ppi_mean
    return (f"checked by people ({c.draws} labelled draws): prediction-powered mean {score_text(p.mean)} 95% CI "
            f"{interval_text(p.ci_low, p.ci_high, form='ascii')}, {reading_text(c)}")


def render_junit(report: Report) -> str:
    gate = {g.metric: g for g in report.gate.results}
    suite = ET.Element("testsuite", name="localragas", tests=str(len(report.summary)))
    props = ET.SubElement(suite, "properties")
    for key, value in (("judge", (report.meta.get("judge") or {}).get("name")),
                       ("embedder", (report.meta.get("embedder") or {}).get("name")),
                       ("samples", report.meta.get("samples", len(report.samples))),
                       ("gate_on", report.gate.on), ("dataset", report.meta.get("dataset")),
                       ("ignored_fields", ", ".join(map(str, report.meta.get("ignored_fields") or [])) or None),
                       ("judge_check", check_line(report.meta)), ("canaries", canary_line(report.meta))):
        if value is not None:
            ET.SubElement(props, "property", name=key, value=xml_text(str(value)))
    failures = skipped = errors = 0
    broken = {x.metric: x for x in report.gate.errors if not x.allowed}
    for s in report.summary:
        case = ET.SubElement(suite, "testcase", classname="localragas.gate", name=s.metric, time="0")
        g = gate.get(s.metric)
        if s.metric in broken:  # could not evaluate: an error, with the gate on or off, gated or not
            err = ET.SubElement(case, "error", type="CouldNotEvaluate", message=xml_text(broken[s.metric].message))
            err.text = xml_text(broken[s.metric].message) + "\n" + _details(report, s.metric)
            errors += 1
        elif g is None or not report.gate.enabled:
            ET.SubElement(case, "skipped", message="quality gate off" if not report.gate.enabled else "no threshold")
            skipped += 1
        elif g.status == "failed":
            hib = g.higher_is_better
            bound = report.gate.on == "lower-bound" and (g.ci_low if hib else g.ci_high) is not None
            what = f"CI {'lower' if hib else 'upper'} bound" if bound else "mean"
            if g.estimate == "prediction-powered":
                what = "prediction-powered " + what
            extra = f" (mean {score_text(g.mean)})" if bound else ""
            side = "below" if hib else "above"
            f = ET.SubElement(case, "failure", type="QualityGateFailed",
                              message=xml_text(f"{s.metric} {what} {score_text(g.compared)} {side} threshold "
                                      f"{threshold_text(g.threshold)}{extra}" + ("" if hib else " (lower is better)")
                                      + (f"; {people}" if (people := people_reading(report, s.metric)) else "")))
            f.text = xml_text(g.message) + "\n" + _details(report, s.metric)
            failures += 1
        elif g.status == "not_evaluated":
            ET.SubElement(case, "skipped", message=xml_text(g.message))
            skipped += 1
        ET.SubElement(case, "system-out").text = _details(report, s.metric)
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", f"{report.meta.get('wall_seconds', 0):.3f}")
    if report.meta.get("started"):
        suite.set("timestamp", str(report.meta["started"])[:19])
    turns = _conversation_suites(report)
    tests = int(suite.get("tests", "0")) + sum(int(t.get("tests", "0")) for t in turns)
    root = ET.Element("testsuites", name="localragas", tests=str(tests), failures=str(failures),
                      errors=str(errors), skipped=str(skipped), time=suite.get("time", ""))
    root.append(suite)
    root.extend(turns)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _turn_scores(result: SampleResult, metrics: list[str]) -> str:
    """A turn's scores, a line a metric: 'faithfulness 0.812', 'context_recall unscored (no_reference)',
    'knowledge_retention n/a (no_earlier_turn)'."""
    lines = []
    for m in metrics:
        r = result.metrics.get(m)
        if r is None:
            continue
        if r.value is not None:
            lines.append(f"{m} {score_text(r.value)}")
        else:
            kind = "n/a" if reason_kind(r.unscored or "") in NOT_APPLICABLE else "unscored"
            lines.append(f"{m} {kind} ({r.unscored or 'no reason recorded'})")
    return xml_text("\n".join(lines))


def _conversation_suites(report: Report) -> list[ET.Element]:
    """A test suite per conversation (its means as properties), a passing test case per turn (its scores as
    system-out), for the first JUNIT_CONVERSATIONS conversations."""
    if not has_conversations(report):
        return []
    out: list[ET.Element] = []
    lower = lower_metrics(report)
    for name, turns in conversation_groups(report.samples):
        if len(out) == JUNIT_CONVERSATIONS:
            break
        row = summarise(name, turns, report.metrics, lower)
        suite = ET.Element("testsuite", name=xml_text(f"conversation {name}"), tests=str(len(turns)), failures="0",
                           errors="0", skipped="0", time=f"{sum(t.seconds for t in turns):.3f}")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="turns", value=str(row.turns))
        for m, got in row.metrics.items():
            ET.SubElement(props, "property", name=f"{m} mean", value=mean_text(got))
        for t in turns:
            case = ET.SubElement(suite, "testcase", classname=xml_text(f"localragas.conversation.{name}"),
                                 name=xml_text(t.id), time=f"{t.seconds:.3f}")
            ET.SubElement(case, "system-out").text = _turn_scores(t, report.metrics)
        out.append(suite)
    return out


def write_junit(report: Report, path: str | Path) -> None:
    write_atomic(path, render_junit(report))
