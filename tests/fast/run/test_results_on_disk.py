"""A large run's results on disk (data/result_store.py, run/results.py): the spilled path gives the same report, the
same files and the same gate as the in-memory one on the same results; summaries read the score columns, not the
results; merge and `localragas report` read shards as they stream; a large HTML page embeds the first and the worst
samples and says so. The spill is forced with a small SPILL_AFTER."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from localragas import evaluate
from localragas.data import lazy_samples
from localragas.data.result_store import SampleStore
from localragas.data.schema import MetricResult, SampleResult
from localragas.report import read_json, write_csv, write_json, write_junit, write_markdown
from localragas.report.html_report import embedded_samples, render_html
from localragas.report.evidence import worst_samples
from localragas.report.json_stream import stream_json
from localragas.judges import FakeJudge, judging
from localragas.run import results as run_results
from localragas.run.checkpoint import Checkpoint, Finished
from localragas.run import runner, scoring
from localragas.run.regate import regate

from cli_helpers import code_and_output as run

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


@pytest.fixture(scope="module")
def in_memory():
    return evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False)


def spilled_copy(report, monkeypatch):
    monkeypatch.setattr(run_results, "SPILL_AFTER", 2)
    on_disk = run_results.spilled(report.samples, len(report.samples), report.metrics)
    assert isinstance(on_disk, SampleStore)
    return regate(report.model_copy(update={"samples": on_disk}))


def written(report, folder: Path) -> dict[str, bytes]:
    folder.mkdir()
    write_json(report, folder / "r.json")
    write_csv(report, folder / "r.csv")
    write_markdown(report, folder / "r.md")
    write_junit(report, folder / "r.xml")
    (folder / "r.html").write_text(render_html(report), encoding="utf-8")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_results_on_disk_give_the_same_report_and_the_same_files(in_memory, monkeypatch, tmp_path):
    on_disk = spilled_copy(in_memory, monkeypatch)
    again = regate(in_memory)
    assert len(on_disk.samples) == 16 and on_disk.samples[3] == in_memory.samples[3]
    assert on_disk.samples[-1] == in_memory.samples[-1] and on_disk.samples[2:4] == in_memory.samples[2:4]
    assert on_disk.summary == again.summary and on_disk.by_category == again.by_category
    assert on_disk.gate == again.gate
    assert on_disk.model_dump_json() == again.model_dump_json()
    assert written(on_disk, tmp_path / "disk") == written(again, tmp_path / "memory")
    assert on_disk.to_pandas().equals(again.to_pandas())


def test_a_large_run_keeps_its_results_on_disk_in_the_runs_order(in_memory, monkeypatch):
    monkeypatch.setattr(run_results, "SPILL_AFTER", 5)
    report = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False, concurrency=3)
    assert isinstance(report.samples, SampleStore)
    assert [s.id for s in report.samples] == [s.id for s in in_memory.samples]
    assert [s.metrics for s in report.samples] == [s.metrics for s in in_memory.samples]
    assert report.summary == in_memory.summary and report.gate == in_memory.gate
    assert report.meta["judge_totals"]["calls"] == in_memory.meta["judge_totals"]["calls"]


def test_a_spilled_reports_summary_reads_its_score_columns_not_its_results(in_memory, monkeypatch):
    on_disk = spilled_copy(in_memory, monkeypatch)

    def refuse(self):
        raise AssertionError("the results were read")

    monkeypatch.setattr(SampleStore, "__iter__", refuse)
    monkeypatch.setattr(SampleStore, "__getitem__", refuse)
    again = regate(on_disk, overrides={"faithfulness": 0.99})
    assert again.summary == on_disk.summary
    assert next(g for g in again.gate.results if g.metric == "faithfulness").threshold == 0.99


@pytest.mark.parametrize("k", [1, 3, 20])
def test_the_worst_samples_of_a_spilled_report_are_read_by_position_and_equal_the_in_memory_ones(in_memory,
                                                                                                   monkeypatch, k):
    on_disk = spilled_copy(in_memory, monkeypatch)
    monkeypatch.setattr(SampleStore, "__iter__", lambda self: (_ for _ in ()).throw(AssertionError("a full pass")))
    for metric in in_memory.metrics:
        assert worst_samples(on_disk, metric, k) == worst_samples(in_memory, metric, k)


def test_results_put_in_any_order_come_back_in_position_order_with_gaps_left_out(tmp_path):
    store = SampleStore(folder=tmp_path)
    rows = {i: SampleResult(id=f"s{i}", metrics={"m": MetricResult(value=i / 10)}) for i in (4, 0, 2, 7)}
    for i, r in rows.items():
        store.put(i, r)
    assert [s.id for s in store.seal()] == ["s0", "s2", "s4", "s7"] and store[2].metrics["m"].value == 0.4
    with pytest.raises(IndexError):
        store[4]
    with pytest.raises(ValueError, match="sealed"):
        store.put(9, rows[0])


def test_a_report_read_as_it_streams_equals_one_read_whole(in_memory, monkeypatch, tmp_path):
    write_json(in_memory, tmp_path / "r.json")
    whole = read_json(tmp_path / "r.json")
    assert stream_json(tmp_path / "r.json") == whole
    monkeypatch.setattr(run_results, "SPILL_AFTER", 3)
    streamed = stream_json(tmp_path / "r.json")
    assert isinstance(streamed.samples, SampleStore) and list(streamed.samples) == whole.samples
    assert regate(streamed).model_dump_json() == regate(whole).model_dump_json()


def test_a_damaged_report_read_as_it_streams_names_the_file_as_before(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"meta": {}, "metrics": ["faithfulness"], "samples": [{"id": ', encoding="utf-8")
    code, out = run("report", bad)
    assert code == 2 and "bad.json" in out


def test_merge_through_results_on_disk_equals_the_unsharded_run(monkeypatch, tmp_path):
    whole, a, b, merged = (tmp_path / f"{n}.json" for n in ("whole", "a", "b", "merged"))
    run("eval", EXAMPLE, *FAST, "--out", whole)
    run("eval", EXAMPLE, *FAST, "--shard", "1/2", "--out", a)
    run("eval", EXAMPLE, *FAST, "--shard", "2/2", "--out", b)
    monkeypatch.setattr(run_results, "SPILL_AFTER", 3)  # each shard read to disk, and the merged results
    code, out = run("merge", a, b, "--out", merged, "--csv", tmp_path / "m.csv")
    assert code in (0, 1), out
    w, m = json.loads(whole.read_text()), json.loads(merged.read_text())
    assert [s["metrics"] for s in m["samples"]] == [s["metrics"] for s in w["samples"]]
    assert m["summary"] == w["summary"] and m["by_category"] == w["by_category"] and m["gate"] == w["gate"]
    assert len((tmp_path / "m.csv").read_text().splitlines()) == 17


def test_a_large_html_page_embeds_the_first_and_the_worst_samples_and_says_so(in_memory):
    shown, note = embedded_samples(in_memory, limit=6)
    lowest = sorted(in_memory.samples, key=lambda s: min(
        (m.value if in_memory.definitions[n].higher_is_better else 1 - m.value)
        for n, m in s.metrics.items() if m.value is not None))[0]
    ids = [s.id for s in shown.samples]
    assert len(ids) == 6 and ids[:3] == [s.id for s in in_memory.samples[:3]] and lowest.id in ids
    assert "6 of the 16 samples" in note
    page = render_html(in_memory)
    assert "of the 16 samples" not in page  # under HTML_SAMPLES: every sample, as always
    assert embedded_samples(in_memory)[1] == ""


def test_a_resumed_run_on_disk_gives_the_uninterrupted_runs_report_and_files(monkeypatch, tmp_path):
    monkeypatch.setattr(run_results, "SPILL_AFTER", 5)  # results on disk past 5, the input read back past 3
    monkeypatch.setattr(lazy_samples, "SPILL_AFTER", 3)
    for timed in (judging, runner, scoring):  # the same seconds in each run: a judge call's, the run's, a sample's
        monkeypatch.setattr(timed, "time", SimpleNamespace(perf_counter=lambda: 0.0))
    whole = evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False)
    ck = tmp_path / "run.jsonl"
    monkeypatch.setattr(Checkpoint, "remove", lambda self: self.release())  # keep the checkpoint of a finished run
    evaluate(str(EXAMPLE), judge="fake", embedder="fake", cache=False, checkpoint=ck, concurrency=3)
    lines = ck.read_bytes().splitlines(keepends=True)
    ck.write_bytes(b"".join(lines[:11]) + lines[11][:60])  # killed while writing the 12th: 11 finished
    taken: list[str] = []
    real_take = Finished.take
    monkeypatch.setattr(Finished, "take", lambda self, i, d: (r := real_take(self, i, d)) and taken.append(r.id) or r)
    monkeypatch.setattr(Checkpoint, "load", lambda self: pytest.fail("the checkpoint's results were loaded whole"))
    resumed = evaluate(str(EXAMPLE), judge=FakeJudge(), embedder="fake", cache=False, checkpoint=ck, concurrency=3)
    assert resumed.meta["resumed_samples"] == 11 and isinstance(resumed.samples, SampleStore)
    order = [s.id for s in whole.samples]
    assert taken == [i for i in order if i in set(taken)]  # each taken from its line in the input's order
    again = {json.loads(line)["result"]["id"] for line in lines[11:]}  # judged again, and only they
    assert len(again) == 5 and not again & set(taken)
    assert resumed.meta["judge_stats"]["calls"] == sum(s.judge_calls for s in whole.samples if s.id in again) > 0
    assert [s.id for s in resumed.samples] == order and resumed.samples[4] == whole.samples[4]
    assert resumed.summary == whole.summary and resumed.by_category == whole.by_category
    assert resumed.gate == whole.gate
    assert resumed.meta["judge_totals"]["calls"] == whole.meta["judge_totals"]["calls"]
    same_meta = resumed.model_copy(update={"meta": whole.meta})
    assert written(same_meta, tmp_path / "resumed") == written(whole, tmp_path / "whole")
