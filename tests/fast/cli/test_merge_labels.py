"""`merge --labels`: the merged run gets its spot checks (as `report --labels` of the unsharded run would), and
without --labels a merge of shards that carried spot checks says it dropped them."""
from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import code_and_output as run
from localragas.data.schema import Report
from spot_helpers import label_items

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume", "-m", "faithfulness"]


def _label(report_path: Path, labels: Path, n: int = 14) -> None:
    report = Report.model_validate_json(report_path.read_text(encoding="utf-8"))
    label_items(report, labels, ("faithfulness",), n=n, answer=lambda x: int(x.orders[0] % 3 != 0))


def test_merge_labels_checks_the_merged_run_as_report_labels_would(tmp_path):
    whole, a, b, merged, checked = (tmp_path / f"{n}.json" for n in ("whole", "a", "b", "merged", "checked"))
    run("eval", EXAMPLE, *FAST, "--out", whole)
    labels = tmp_path / "labels.jsonl"
    _label(whole, labels)
    run("eval", EXAMPLE, *FAST, "--shard", "1/2", "--out", a)
    run("eval", EXAMPLE, *FAST, "--shard", "2/2", "--out", b)
    code, out = run("merge", a, b, "--labels", labels, "--out", merged)
    code_whole, _ = run("report", whole, "--labels", labels, "--out", checked)
    assert code == code_whole, out
    m, w = json.loads(merged.read_text()), json.loads(checked.read_text())
    assert m["spot_checks"]["metrics"]["faithfulness"]["draws"] == 14
    assert m["spot_checks"]["metrics"] == w["spot_checks"]["metrics"]
    assert m["gate"]["results"] == w["gate"]["results"]


def test_merge_without_labels_says_it_dropped_the_shards_spot_checks(tmp_path):
    a, b, merged = (tmp_path / f"{n}.json" for n in ("a", "b", "merged"))
    run("eval", EXAMPLE, *FAST, "--shard", "1/2", "--out", a)
    labels = tmp_path / "labels.jsonl"
    _label(a, labels)
    run("eval", EXAMPLE, *FAST, "--shard", "1/2", "--labels", labels, "--out", a)
    assert json.loads(a.read_text())["spot_checks"] is not None
    run("eval", EXAMPLE, *FAST, "--shard", "2/2", "--out", b)
    code, out = run("merge", a, b, "--out", merged)
    assert "1 shard(s) carried people's spot checks; they are not merged" in out and "--labels" in out
    assert json.loads(merged.read_text()).get("spot_checks") is None
