"""`calibrate --fit FILE --labels LABELS --report RUN`: a calibration map fitted on people's labels of a run's items
(quality/labels_fit.py), cross-fitted; the file loads in `eval --judge-option calibration=FILE`; labels of another
run are refused (exit 2)."""
from __future__ import annotations

import json

import numpy as np

from cli_helpers import cli, sample_rows, write_jsonl
from localragas.quality.calibration_fit import FamilyItems
from localragas.quality.labels_fit import KEEP, cross_fit
from localragas.report import write_json
from spot_helpers import checked_report, label_items

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-history"]


def _run(tmp_path, seed=0, n=60):
    report = checked_report(seed=seed)
    path = tmp_path / f"run{seed}.json"
    write_json(report, path)
    labels = tmp_path / f"labels{seed}.jsonl"
    label_items(report, labels, ("faithfulness", "context_recall"), n=n, seed=seed)
    return path, labels


def test_fit_from_labels_writes_a_calibration_eval_loads(tmp_path):
    path, labels = _run(tmp_path)
    fit = tmp_path / "my.calibration.json"
    r = cli("calibrate", "--fit", fit, "--labels", labels, "--report", path)
    assert r.exit_code == 0, r.output
    assert "fitted verify_statement (faithfulness, context_recall)" in r.output
    assert "cross-fitted" in r.output and "ROC AUC" in r.output and "Brier" in r.output
    assert "faithfulness (" in r.output and "context_recall (" in r.output  # a threshold reading per metric
    doc = json.loads(fit.read_text())
    family = doc["families"]["verify_statement"]
    assert doc["format"] == "localragas-calibration/1" and family["a"] > 0
    assert family["fitted_on"]["source"] == {"labels": [str(labels)], "report": str(path)}
    assert family["fitted_on"]["metrics"] == ["faithfulness", "context_recall"]
    assert len(family["prompt_sha256"]["verify_statement"]) == 64
    assert doc["judge"] == {"name": "fake"}
    # the written file is a calibration eval applies
    data = write_jsonl(tmp_path / "data.jsonl", sample_rows(2))
    out = tmp_path / "eval.json"
    e = cli("eval", data, *FAST, "-m", "faithfulness", "--judge-option", f"calibration={fit}", "--out", out)
    assert e.exit_code in (0, 1), e.output
    meta = json.loads(out.read_text())["meta"]
    assert meta["calibration"]["source"] == str(fit) and "verify_statement" in meta["calibration"]["families"]


def test_labels_of_another_run_are_refused(tmp_path):
    path, _ = _run(tmp_path, seed=0)
    _, other = _run(tmp_path, seed=1)
    fit = tmp_path / "fit.json"
    r = cli("calibrate", "--fit", fit, "--labels", other, "--report", path)
    assert r.exit_code == 2 and "is not an item of this run" in r.output and str(other) in r.output
    assert not fit.exists()


def test_labels_need_fit_and_report_and_enough_of_each_class(tmp_path):
    path, labels = _run(tmp_path, n=8)
    r = cli("calibrate", "--labels", labels, "--report", path)
    assert r.exit_code == 2 and "--fit FILE --labels" in r.output
    r = cli("calibrate", "--fit", tmp_path / "f.json", "--labels", labels, "--report", path)
    assert r.exit_code == 2 and "a fit needs at least 10 of each" in r.output
    r = cli("calibrate", "--fit", tmp_path / "f.json", "--labels", labels, "--report", path, "--md", tmp_path / "x.md")
    assert r.exit_code == 2 and "--md does not apply" in r.output


def _family(raw, y):
    return FamilyItems("verify_statement", ["faithfulness"], list(raw), list(y))


def test_threshold_suggested_only_when_it_wins_out_of_fold():
    rng = np.random.default_rng(3)
    # a calibrated judge on items half supported: the best cut (about the share supported, 0.5) is far from the
    # shipped 0.80, so a fitted threshold wins on the held-out folds
    raw = rng.uniform(0.05, 0.95, 120)
    y = (rng.uniform(size=raw.size) < raw).astype(int)
    good = cross_fit(_family(raw, y), ["faithfulness"] * raw.size, {"faithfulness": 0.8})
    t = good.thresholds[0]
    assert t.ba_fitted > t.ba_shipped and t.suggested is not None and KEEP not in t.text()
    assert good.folds == 5 and good.auc > 0.7
    # a judge at chance: no threshold is suggested
    y = rng.integers(0, 2, raw.size)
    chance = cross_fit(_family(raw, y), ["faithfulness"] * raw.size, {"faithfulness": 0.5})
    c = chance.thresholds[0]
    assert c.suggested is None and KEEP in c.text()
    few = cross_fit(_family(raw[:30], y[:30]), ["faithfulness"] * 30, {"faithfulness": 0.8})
    assert few.folds == 0 and "leave-one-out" in few.lines()[0]


def test_a_report_without_sample_text_needs_its_data_file(tmp_path):
    from pathlib import Path  # noqa: PLC0415

    from localragas.data.schema import Report  # noqa: PLC0415
    from spot_helpers import label_items  # noqa: PLC0415

    data = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
    run = tmp_path / "run.json"
    cli("eval", data, *FAST, "--no-cache", "--no-sample-text", "-m", "faithfulness", "--out", run)
    labels = tmp_path / "labels.jsonl"
    label_items(Report.model_validate_json(run.read_text()), labels, ("faithfulness",), n=60, data=data,
                answer=lambda x: int(x.item.judge_score >= 0.5) if x.orders[0] % 4 else 0)
    fit = tmp_path / "fit.json"
    r = cli("calibrate", "--fit", fit, "--labels", labels, "--report", run)
    assert r.exit_code == 2 and "(--data DATA)" in r.output and not fit.exists()
    r = cli("calibrate", "--fit", fit, "--labels", labels, "--report", run, "--data", data)
    assert r.exit_code == 0, r.output
    assert json.loads(fit.read_text())["families"]["verify_statement"]["fitted_on"]["items"] > 20
