"""Build Reports from plain per-sample values, for tests of aggregates, gate, compare and report formats; run the
HTML report's app.js over a report in node (html_tree)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from localragas.data.conversation_models import TurnResult
from localragas.run.regate import regate
from localragas.data.schema import Gate, MetricResult, Report, SampleResult


def turn_of(sid: str, ids) -> TurnResult | None:
    """A sample id "<conversation>#<turn>" as its TurnResult (turns: the most of that conversation in ids); None for
    an id without '#'."""
    if "#" not in sid:
        return None
    conversation, turn = sid.rsplit("#", 1)
    turns = max(int(i.rsplit("#", 1)[1]) for i in ids if i.rsplit("#", 1)[0] == conversation and "#" in i)
    return TurnResult(conversation=conversation, turn=int(turn), turns=turns)


def make_report(values: dict[str, dict[str, float | str | None]], thresholds: dict[str, float] | None = None,
                judge: str = "fake", embedder: str = "fake", gate: bool = True, gate_on: str = "mean",
                category: dict[str, str] | None = None, turns: bool = False) -> Report:
    """values: sample id -> metric -> value (None: unscored with reason 'no_reference'; a string: unscored with that
    reason). turns: an id "<conversation>#<turn>" is that turn of that conversation (turn_of)."""
    metrics = list(dict.fromkeys(m for row in values.values() for m in row))
    samples = []
    for sid, row in values.items():
        res = {}
        for m, v in row.items():
            if v is None:
                res[m] = MetricResult.unscored_because("no_reference")
            elif isinstance(v, str):
                res[m] = MetricResult.unscored_because(v)
            elif m == "faithfulness":
                res[m] = MetricResult.of(v, claims=[{"claim": f"claim of {sid}", "supported": v >= 0.5},
                                                    {"claim": "second", "supported": True}])
            else:
                res[m] = MetricResult.of(v)
        samples.append(SampleResult(id=sid, category=(category or {}).get(sid), metrics=res,
                                    turn=turn_of(sid, values) if turns else None))
    meta = {"judge": {"name": judge, "fingerprint": f"fp-{judge}"}, "embedder": {"name": embedder},
            "samples": len(samples), "wall_seconds": 1.5, "started": "2026-11-30T03:00:00+00:00"}
    report = Report(meta=meta, metrics=metrics, gate=Gate(enabled=gate, passed=True), samples=samples)
    return regate(report, thresholds or {}, gate_on=gate_on, enabled=gate)


NODE = shutil.which("node")
_REPORT_JS = Path(__file__).resolve().parent / "report" / "js"


def html_tree(tmp_path: Path, data: dict, open_toggles: bool = False) -> str:
    """The HTML page of a report's JSON `data` run in node over a stub DOM (tests/fast/report/js/drill_down.js):
    every row of the conversation and sample tables clicked, the drawer printed after each; open_toggles: every
    toggle button in the drawer clicked first. Needs node (NODE)."""
    from localragas.report import read_json  # noqa: PLC0415
    from localragas.report.html_report import render_html  # noqa: PLC0415

    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    page = tmp_path / "r.html"
    page.write_text(render_html(read_json(path)), encoding="utf-8")
    app = Path(__file__).resolve().parents[2] / "localragas" / "report" / "html" / "app.js"
    env = {**os.environ, "OPEN_TOGGLES": "1" if open_toggles else ""}
    got = subprocess.run([str(NODE), str(_REPORT_JS / "drill_down.js"), str(app), str(page)], capture_output=True,
                         text=True, timeout=60, env=env)
    assert got.returncode == 0, got.stderr
    return got.stdout
