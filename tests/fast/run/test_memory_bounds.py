"""Memory stays bounded on large runs: a sample's result keeps its judge calls summed per prompt family, never a
list of every call; the JSON and HTML reports are written one sample at a time; the bootstrap draws a bounded number of
indices at a time; a fake judge made from a name keeps no record of its prompts. Reports and checkpoints that
listed every call are still read."""
from __future__ import annotations

import json

import pytest

from localragas import evaluate
from localragas.run import stats
from localragas.run.checkpoint import Checkpoint
from localragas.judges import FakeJudge, get_judge
from localragas.metrics import get_metrics
from localragas.report import read_json, write_json
from localragas.report.html_report import embed_json, render_html, write_html
from localragas.report.json_report import json_pieces
from localragas.data.schema import Sample, SkippedRow

from cli_helpers import cli

METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
COUNTERS = {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens", "seconds"}


def sample(i: int, claims: int) -> Sample:
    facts = [f"Bridge {i}-{k} spans the river Ouse at mile {k}." for k in range(claims)]
    return Sample(id=f"s{i}", question=f"Which bridges span the Ouse near town {i}?", contexts=facts[:3],
                  answer=" ".join(facts), reference=" ".join(facts), category="a" if i % 2 else "b")


def test_calls_are_summed_per_prompt_family_however_many_there_are():
    judge = FakeJudge()
    report = evaluate([sample(0, 2), sample(1, 16)], metrics=METRICS, judge=judge, embedder="fake", cache=False)
    few, many = report.samples
    families = {p for m in get_metrics(METRICS) for p in m.prompts}
    assert many.judge_calls > 3 * few.judge_calls  # 16 claims and 16 statements, each verified on its own
    for r in (few, many):
        assert "calls" not in r.model_dump()  # no per-call list, in memory or in the report
        assert set(r.calls_by_prompt) <= families and list(r.calls_by_prompt) == list(few.calls_by_prompt)
        assert all(set(row) == COUNTERS for row in r.calls_by_prompt.values())
        assert sum(row["calls"] for row in r.calls_by_prompt.values()) == r.judge_calls
        assert sum(row["prompt_tokens"] for row in r.calls_by_prompt.values()) == r.judge["prompt_tokens"]
    assert many.calls_by_prompt["verify_statement"]["calls"] + many.calls_by_prompt["verify_statement"][
        "cache_hits"] == 32
    asked = [c.prompt.name for c in judge.calls]
    assert sum(row["calls"] for r in (few, many) for row in r.calls_by_prompt.values()) == len(asked)


def test_a_cached_rerun_counts_cache_hits_per_family(tmp_path):
    first = evaluate([sample(0, 4)], metrics=METRICS, judge=FakeJudge(), embedder="fake", cache_dir=tmp_path)
    again = evaluate([sample(0, 4)], metrics=METRICS, judge=FakeJudge(), embedder="fake", cache_dir=tmp_path)
    before, after = first.samples[0].calls_by_prompt, again.samples[0].calls_by_prompt
    assert list(after) == list(before)
    for name, row in after.items():
        assert row["calls"] == 0 and row["cache_hits"] == before[name]["calls"] + before[name]["cache_hits"]


def _old_form(result: dict) -> dict:
    """A sample result as reports and checkpoints held it before calls_by_prompt: one record per call."""
    calls = []
    for name, row in result["calls_by_prompt"].items():
        for i, hit in enumerate([False] * row["calls"] + [True] * row["cache_hits"]):
            first = i == 0  # the family's first record carries its tokens and seconds, the others none
            tokens = {k: row[k] if first else 0 for k in ("prompt_tokens", "completion_tokens", "cached_tokens")}
            calls.append({"prompt": name, "cache_hit": hit, "seconds": row["seconds"] if first else 0.0, **tokens})
    return {**{k: v for k, v in result.items() if k != "calls_by_prompt"}, "calls": calls}


def test_old_reports_listing_every_call_are_read_and_written_in_the_new_form(tmp_path):
    report = evaluate([sample(0, 2), sample(1, 5)], metrics=METRICS, judge=FakeJudge(), embedder="fake")
    data = json.loads(report.model_dump_json())
    data["samples"] = [_old_form(s) for s in data["samples"]]
    assert len(data["samples"][1]["calls"]) >= 10
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data, indent=2))
    assert [s.calls_by_prompt for s in read_json(old).samples] == [s.calls_by_prompt for s in report.samples]
    new = tmp_path / "new.json"
    r = cli("report", str(old), "--out", str(new), "--no-gate")
    assert r.exit_code == 0, r.output
    again = json.loads(new.read_text())
    assert all("calls" not in s for s in again["samples"])
    assert [s["calls_by_prompt"] for s in again["samples"]] == [s.calls_by_prompt for s in report.samples]
    assert [s["metrics"] for s in again["samples"]] == [s["metrics"] for s in data["samples"]]
    r = cli("compare", str(old), str(new))
    assert r.exit_code == 0, r.output


def test_a_checkpoint_listing_every_call_still_resumes(tmp_path):
    samples = [sample(0, 2), sample(1, 3)]
    path = tmp_path / "run.jsonl"
    first = evaluate(samples, metrics=METRICS, judge=FakeJudge(), embedder="fake", checkpoint=path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**row, "result": _old_form(row["result"])}) + "\n" for row in rows))
    judge = FakeJudge()
    again = evaluate(samples, metrics=METRICS, judge=judge, embedder="fake", checkpoint=Checkpoint(path))
    assert again.meta["resumed_samples"] == 2 and judge.calls == []
    assert again.samples == first.samples


def test_the_json_report_is_written_one_sample_at_a_time_with_the_same_bytes(tmp_path):
    hostile = Sample(id='q"\n</script>', question="Ünïcode — 中文?\n", contexts=["a\tb \\ c", "<!--"],
                     answer="It is \"so\".\nYes.", reference="It is so.", category="x")
    report = evaluate([sample(0, 3), hostile, sample(1, 1)], metrics=METRICS, judge=FakeJudge(), embedder="fake")
    report = report.model_copy(update={"skipped": [SkippedRow(path="d.jsonl", line=3, field="answer", reason="x")]})
    for kept in (report.samples, [], report.samples[1:2]):
        r = report.model_copy(update={"samples": kept})
        whole = r.model_dump_json(indent=2)
        assert "".join(json_pieces(r)) == whole
        write_json(r, tmp_path / "r.json")
        assert (tmp_path / "r.json").read_text(encoding="utf-8") == whole + "\n"
        compact = r.model_dump_json()
        assert "".join(json_pieces(r, indent=None)) == compact
        assert embed_json(r) == compact.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        write_html(r, tmp_path / "r.html")
        assert (tmp_path / "r.html").read_text(encoding="utf-8") == render_html(r)
    assert len(list(json_pieces(report))) == len(report.samples) + 2


@pytest.mark.parametrize("n", [2, 7, 1001])
def test_the_bootstrap_draws_the_same_resamples_in_any_chunk(monkeypatch, n):
    values = [((i * 7919) % 1000) / 1000 for i in range(n)]
    whole = stats.bootstrap_ci(values)
    monkeypatch.setattr(stats, "_DRAWN", 3 * n)  # three resamples at a time, not 250
    assert stats.bootstrap_ci(values) == whole
    monkeypatch.setattr(stats, "_DRAWN", 1)
    assert stats.bootstrap_ci(values) == whole


def test_a_fake_judge_made_from_a_name_keeps_no_record_of_its_prompts():
    named = get_judge("fake")
    report = evaluate([sample(0, 3)], metrics=METRICS, judge=named, embedder="fake")
    assert report.meta["judge_stats"]["calls"] > 0 and named.calls == []
    held = FakeJudge()
    report = evaluate([sample(0, 3)], metrics=METRICS, judge=held, embedder="fake")
    assert len(held.calls) == report.meta["judge_stats"]["calls"]  # a test's own fake judge still records every call

