"""The default gate thresholds are one table, stated once: each metric declares its own (`thresholds`), docs/gate.md's
table says the same, the example gate (examples/test_rag_quality_gate.py) uses the article's (the calibrated and
verdicts=json column), and every gate prints the thresholds it applied and why."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from localragas.data.metric_definition import CALIBRATED, NO_MODE
from localragas.metrics.registry import all_metrics

from localragas import evaluate, load_samples

from cli_helpers import cli, write_file

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"
FAKE = ["--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress"]
COLUMNS = (CALIBRATED, "probability", "json")  # calibrated judge, uncalibrated judge, verdicts=json


def declared() -> dict[str, tuple[float | None, ...]]:
    """metric -> its default threshold per column, from the metrics' own declarations."""
    table = {}
    for name, metric in all_metrics().items():
        t = metric.describe().thresholds
        if t:
            table[name] = tuple(t.get(c, t.get(NO_MODE)) for c in COLUMNS)
    return table


def documented() -> dict[str, tuple[float | None, ...]]:
    """metric -> its default per column in docs/gate.md's table ("—": none in that column)."""
    text = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8").split("## Thresholds", 1)[1]
    rows = re.findall(r"^\| (\w+) \| ([\d.]+|—) \| ([\d.]+|—) \| ([\d.]+|—) \|$", text.split("\n## ", 1)[0],
                      flags=re.M)
    return {name: tuple(None if v == "—" else float(v) for v in values) for name, *values in rows}


def test_docs_gate_table_is_the_metrics_declared_defaults():
    assert documented() == declared()
    assert set(declared()) == {"faithfulness", "answer_relevancy", "context_precision", "context_recall",
                               "knowledge_retention", "conversation_completeness"}
    # graded only, with no calibration for their families: the uncalibrated column alone
    assert declared()["knowledge_retention"] == declared()["conversation_completeness"] == (None, 0.5, None)


def test_calibrated_and_json_defaults_agree_and_the_example_gate_uses_them():
    tree = ast.parse((ROOT / "examples" / "test_rag_quality_gate.py").read_text(encoding="utf-8"))
    gate = next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "QUALITY_GATE")
    table = declared()
    assert gate == {name: calibrated for name, (calibrated, _, _) in table.items() if calibrated is not None}
    assert all(calibrated == json_ for calibrated, _, json_ in table.values())


def _thresholds_line(output: str) -> str:
    return output.split("  thresholds: ", 1)[1].splitlines()[0]  # one line on the 200-column console


def test_every_gate_prints_each_threshold_and_why(tmp_path):
    r = cli("eval", EXAMPLES, *FAKE, "-t", "faithfulness=0.6", "--metric-option", "context_recall.verdicts=json",
            "--out", tmp_path / "r.json")
    assert r.exit_code == 1, r.output
    assert _thresholds_line(r.output) == (
        "faithfulness >= 0.60 (set with -t), answer_relevancy >= 0.75 (default), context_precision >= 0.50 (uncalibrated "
        "default), context_recall >= 0.70 (verdicts=json default)")
    stored = {g["metric"]: g["threshold_source"] for g in json.loads((tmp_path / "r.json").read_text())["gate"]["results"]}
    assert stored["faithfulness"] == "set with -t" and stored["context_recall"] == "verdicts=json default"

    calibration = ROOT / "localragas" / "calibrations" / "qwen2.5-1.5b.json"  # any map covering the families
    r = cli("eval", EXAMPLES, *FAKE, "--judge-option", f"calibration={calibration}", "-m",
            "faithfulness,context_precision,context_recall")
    assert _thresholds_line(r.output) == (
        "faithfulness >= 0.80 (calibrated default), context_precision >= 0.65 (calibrated default), "
        "context_recall >= 0.70 (calibrated default)")

    r = cli("report", tmp_path / "r.json", "-t", "answer_relevancy=0.3")  # regated: the stored run's own, and -t
    assert "answer_relevancy >= 0.30 (set with -t)" in _thresholds_line(r.output)
    assert "context_recall >= 0.70 (verdicts=json default)" in _thresholds_line(r.output)
    assert "faithfulness >= 0.60 (set with -t)" in _thresholds_line(r.output)  # the run's, as it recorded it


def test_a_threshold_not_the_default_says_where_it_was_set(tmp_path):
    """Not "(given)": the settings file (and its named eval's table), the flag or evaluate() (issue 47, item 13)."""
    write_file(tmp_path, "localragas.toml", "[thresholds]\nfaithfulness = 0.6\n[evals.nightly.thresholds]\n"
                                            "context_recall = 0.4\n")
    r = cli("eval", EXAMPLES, *FAKE, "--config", tmp_path / "localragas.toml", "--eval", "nightly",
            "-t", "context_precision=0.3", "--out", tmp_path / "r.json")
    said = " ".join(r.output.split()).split(" thresholds: ", 1)[1]  # a line longer than the console's 200 columns
    assert said.startswith(
        "faithfulness >= 0.60 (set in localragas.toml), answer_relevancy >= 0.75 (default), context_precision >= "
        "0.30 (set with -t), context_recall >= 0.40 (set in localragas.toml [evals.nightly])")
    meta = json.loads((tmp_path / "r.json").read_text())["meta"]
    assert meta["threshold_origins"] == {"faithfulness": "set in localragas.toml", "context_precision": "set with -t",
                                         "context_recall": "set in localragas.toml [evals.nightly]"}
    report = evaluate(load_samples(EXAMPLES)[0][:2], judge="fake", embedder="fake", cache=False,
                      thresholds={"faithfulness": 0.3})
    assert {g.metric: g.threshold_source for g in report.gate.results}["faithfulness"] == "set in evaluate()"
