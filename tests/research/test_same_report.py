"""research.benchmarks.same_report: two runs of the examples with the fake judge are the same report, timings aside;
a changed score or a changed call count is a difference, named."""
from __future__ import annotations

import copy
import json

from research.benchmarks.same_report import differences, main

from localragas import evaluate
from localragas.report.json_report import write_json


def _report(tmp_path) -> dict:
    report = evaluate("examples/rag_samples.jsonl", judge="fake", embedder="fake", cache=False, judge_check=False,
                      progress=False)
    path = tmp_path / "r.json"
    write_json(report, path)
    return json.loads(path.read_text())


def test_two_runs_are_the_same_report_and_a_changed_score_is_named(tmp_path, capsys):
    a = _report(tmp_path)
    b = copy.deepcopy(a)
    for s in b["samples"]:
        for calls in (s.get("calls_by_prompt") or {}).values():
            calls["seconds"] = 99.0
    compared, found = differences(a, b)
    assert compared == 16 * 4 and found == []
    first = b["samples"][0]
    metric = sorted(first["metrics"])[0]
    first["metrics"][metric]["score"] = -1.0
    compared, found = differences(a, b)
    assert len(found) == 1 and found[0].startswith(f"{first['id']}.{metric}:")
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "64 sample x metric results compared; 1 differences" in capsys.readouterr().out
