"""`merge --labels`: the merged run gets its spot checks (as `report --labels` of the unsharded run would), and
without --labels a merge of shards that carried spot checks says it dropped them."""
from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import code_and_output as run
from localragas.data.labels import Design, Label, append_label
from localragas.data.schema import Report
from localragas.quality.review_draw import plan
from localragas.quality.review_items import review_items

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume", "-m", "faithfulness"]


def _label(report_path: Path, labels: Path, n: int = 14) -> None:
    report = Report.model_validate_json(report_path.read_text(encoding="utf-8"))
    for j, x in enumerate(plan(review_items(report, ["faithfulness"]), ["faithfulness"], n, 0)):
        append_label(labels, Label(key=x.item.key, sample_id=x.item.sample_id, metric=x.item.metric,
                                   item=x.item.index, item_hash=x.item.key.rsplit("|", 1)[1], label=j % 3 != 0,
                                   reviewer="ana", time="2026-12-01T10:00:00+00:00",
                                   design=Design(seed=x.seed, focus=x.focus, draws=x.orders, p=x.p)))


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
