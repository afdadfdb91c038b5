"""research.spot_checks on synthetic `calibrate --out`-like files: a judge biased upward, whose printed interval
misses people's share while the prediction-powered one covers it."""
from __future__ import annotations

import json

import numpy as np

from research.spot_checks import main, measure, read_rows


def _calibrate_file(path, rows=300, shift=0.2, seed=0):
    rng = np.random.default_rng(seed)
    chance = rng.uniform(0.05, 0.95, rows)
    labels = (rng.uniform(size=rows) < chance).astype(int)
    scores = np.clip(chance + shift + rng.normal(0, 0.1, rows), 0, 1)
    result = {"file": "synthetic.jsonl", "metric": "faithfulness", "kind": "binary",
              "agreement": {"kind": "binary", "rows": rows, "scored": rows, "unscored": 0, "gate_threshold": 0.6},
              "per_row": [{"id": f"r{i}", "label": int(y), "score": float(s)} for i, (y, s) in
                          enumerate(zip(labels, scores))] + [{"id": "unscored", "label": 1, "score": None}]}
    path.write_text(json.dumps({"meta": {}, "results": [result, {**result, "kind": "graded"}]}))
    return path


def test_a_biased_judge_is_caught_by_the_labels(tmp_path):
    rows = read_rows([_calibrate_file(tmp_path / "a.json")])
    assert len(rows) == 1 and rows[0].labels.size == 300  # the graded result and the unscored row left out
    m = measure(rows[0], 50, 300, 0)
    assert m["cover_judge"] == 0.0 and m["cover_ppi"] >= 0.9 and m["cover_labels"] >= 0.9
    assert m["width_ppi"] <= m["width_labels"] + 1e-9
    assert m["wrong_judge"] == 1.0 and m["wrong_ppi"] < 0.5  # share ~0.5 < 0.6 <= judge mean ~0.7


def test_prints_a_markdown_table(tmp_path, capsys):
    _calibrate_file(tmp_path / "a.json")
    main(["--calibration-out", str(tmp_path), "--reps", "50", "--sizes", "30,50"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| result | rows |") and len(out) == 4 and "synthetic.jsonl faithfulness" in out[2]
