"""`compare` of runs with people's labels: both runs labelled -> their prediction-powered means are compared (and the
output says so); only one labelled -> the judge's means, and the output says why."""
from __future__ import annotations

import json

from cli_helpers import cli
from localragas.report import write_json
from spot_helpers import checked_report, label_items

LIMITS = {"faithfulness": 0.6, "context_recall": 0.5, "context_precision": 0.5}


def _runs(tmp_path):
    """Two runs of the same items: a judge biased upwards (base) and an unbiased one (new). The people's labels (the
    same items, so the same keys) say nothing changed; the judge's means say faithfulness fell."""
    paths = {}
    for name, shift in (("base", 0.25), ("new", 0.0)):
        report = checked_report(judge_shift=shift, thresholds=LIMITS)
        raw = tmp_path / f"{name}.json"
        write_json(report, raw)
        paths[name] = raw
    labels = tmp_path / "labels.jsonl"
    label_items(checked_report(thresholds=LIMITS), labels, ("faithfulness",), n=60)
    for name in ("base", "new"):
        checked = tmp_path / f"{name}-checked.json"
        cli("report", paths[name], "--labels", labels, "--out", checked)
        paths[f"{name}-checked"] = checked
    return paths


def test_both_labelled_compares_the_prediction_powered_means(tmp_path):
    p = _runs(tmp_path)
    out, md = tmp_path / "cmp.json", tmp_path / "cmp.md"
    plain = tmp_path / "judge.json"
    cli("compare", p["base"], p["new"], "--out", plain)
    faith_judge = next(m for m in json.loads(plain.read_text())["metrics"] if m["metric"] == "faithfulness")
    assert faith_judge["estimate"] == "judge" and faith_judge["verdict"] == "regressed"  # the judge's bias moved
    page = tmp_path / "cmp.html"
    r = cli("compare", p["base-checked"], p["new-checked"], "--out", out, "--md", md, "--html", page)
    assert r.exit_code == 0, r.output
    faith = next(m for m in json.loads(out.read_text())["metrics"] if m["metric"] == "faithfulness")
    base_ppi = json.loads(p["base-checked"].read_text())["spot_checks"]["metrics"]["faithfulness"]["ppi_mean"]
    assert faith["estimate"] == "prediction-powered" and faith["base_mean"] == base_ppi["mean"]
    assert faith["verdict"] == "within_noise" and faith["ci_low"] < 0 < faith["ci_high"]
    assert "prediction-powered means compared" in r.output and "(prediction-powered)" in r.output
    assert "prediction-powered means compared" in md.read_text()
    assert "faithfulness: prediction-powered means compared" in page.read_text()
    recall = next(m for m in json.loads(out.read_text())["metrics"] if m["metric"] == "context_recall")
    assert recall["estimate"] == "judge" and recall["note"] is None  # no labels of it on either run


def test_one_labelled_compares_the_judges_means_and_says_why(tmp_path):
    p = _runs(tmp_path)
    out = tmp_path / "cmp.json"
    r = cli("compare", p["base-checked"], p["new"], "--out", out)
    faith = next(m for m in json.loads(out.read_text())["metrics"] if m["metric"] == "faithfulness")
    assert faith["estimate"] == "judge"
    assert "the judge's means compared: only the base run has enough people's labels" in r.output
