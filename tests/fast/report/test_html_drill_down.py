"""The HTML report's evidence panel (report/html/app.js) run in node over a stub DOM
(tests/fast/report/js/drill_down.js): each metric's evidence is shown by the renderer its definition in the report
names. Skipped without node; the browser tier (tests/browser) runs the page in Chromium."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from localragas.report import read_json
from localragas.report.html_report import render_html

from cli_helpers import cli

HERE = Path(__file__).resolve().parent
APP = HERE.parents[2] / "localragas" / "report" / "html" / "app.js"
EXAMPLE = HERE.parents[2] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]
NODE = shutil.which("node")


def drill_down(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    page = tmp_path / "r.html"
    page.write_text(render_html(read_json(path)), encoding="utf-8")
    got = subprocess.run([NODE, str(HERE / "js" / "drill_down.js"), str(APP), str(page)], capture_output=True,
                         text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    return got.stdout


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_each_metric_evidence_is_shown_by_the_renderer_its_stored_definition_names(tmp_path):
    out = tmp_path / "run.json"
    assert cli("eval", EXAMPLE, *FAST, "--no-gate", "-n", "2", "--out", out).exit_code == 0
    data = json.loads(out.read_text(encoding="utf-8").replace('"context_recall"', '"plugin_recall"'))
    data["definitions"]["plugin_recall"]["renderer"].update(yes="PLUGIN-YES", no="PLUGIN-NO")
    data["definitions"]["faithfulness"]["renderer"] = {}  # no renderer: its evidence as a key/value list
    tree = drill_down(tmp_path, data)
    assert tree.startswith("rows 2\n")
    panels = tree.split("\nDIV \n")[1:]  # the detail body, once per sample
    assert len(panels) == 2
    first = panels[0]
    assert "OL.chunks" in first and "TABLE.data.compact" in first  # context_precision, answer_relevancy
    assert '"✓ PLUGIN-YES"' in tree or '"✗ PLUGIN-NO"' in tree  # the plugin metric, by its stored renderer
    faithfulness = first.split('H3 "faithfulness"')[1].split("SECTION.metric-detail")[0]
    assert "OL.verdicts" not in faithfulness and 'DT "claims"' in faithfulness
