"""`localragas calibrate`: labelled rows read and checked, scored with only their label's metric, agreement reported.

Fixtures are written here by hand; when ../shared/benchmarks exists, the first 6 rows of two of its files are read
from there in place (their licences are non-commercial / research-only: never copied into the repository).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import localragas.judges as judges
from localragas.quality.labelled import load_labelled, take
from localragas.core.errors import DatasetError
from localragas.judges import FakeJudge
from localragas.judges.fake import _between
from localragas.metrics import all_metrics

from calibration_helpers import CTX, faith_row, pair_rows
from cli_helpers import cli, write_jsonl
from metrics_helpers import MODES, SUPPORT_CALL

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
# ../shared/benchmarks next to the checkout, or $LOCALRAGAS_BENCHMARKS
BENCHMARKS = Path(os.environ.get("LOCALRAGAS_BENCHMARKS") or Path(__file__).resolve().parents[3].parent / "shared"
                  / "benchmarks")


@pytest.fixture
def judge(monkeypatch):
    """A fake judge (its heuristic replies) that the CLI gets, so tests see what it was asked."""
    fake = FakeJudge()
    monkeypatch.setattr(judges, "get_judge", lambda spec=None, options=None: fake)
    return fake


def run(args: list[str], code: int = 0):
    result = cli("calibrate", *args)
    assert result.exit_code == code, result.output + str(result.exception)
    return result


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the three kinds --------------------------------------------------------------------------------------------------


def test_binary_faithfulness(tmp_path, judge):
    data = write_jsonl(tmp_path / "faith.jsonl", [
        faith_row(1, "The Eiffel Tower is in Paris.", 1),
        faith_row(2, "The Eiffel Tower was completed in 1889 for the World's Fair.", 1),
        faith_row(3, "The Eiffel Tower is in Rome, built by Caesar himself.", 0),
        faith_row(4, "Ok.", 0),  # no claim: unscored (no_claims)
    ])
    out, md = tmp_path / "calib.json", tmp_path / "calib.md"
    # JSON verdicts: the fake judge's yes/no gives these rows exact scores (graded: test_metric_option_picks_…);
    # the judge's claims (statements=claims), so that "Ok." has none
    result = run([str(data), *FAST, "--metric-option", "faithfulness.verdicts=json", "--metric-option",
                  "faithfulness.statements=claims", "--out", str(out), "--md", str(md)])

    # only faithfulness was asked: claims of each answer, then verdicts against the context
    assert {c.prompt.name for c in judge.calls} == {"extract_claims", "verify_statements"}
    assert any("Rome, built by Caesar" in p.user for p in judge.asked("extract_claims"))
    assert all(CTX in p.user for p in judge.asked("verify_statements"))

    doc = read(out)
    assert doc["meta"]["judge"] == {"name": "fake", "fingerprint": "fake:fake"}
    assert doc["meta"]["ci"]["resamples"] == 2000
    [c] = doc["results"]
    assert (c["metric"], c["kind"], c["rows"], c["scored"], c["unscored"]) == ("faithfulness", "binary", 4, 3, 1)
    assert c["unscored_reasons"] == {"no_claims": 1}
    a = c["agreement"]
    assert set(a["measures"]) == set(a["counted_wrong"]) == {
        "roc_auc", "balanced_accuracy_at_gate", "balanced_accuracy_at_best"}
    assert a["classes"] == {"good": 2, "bad": 2} and a["gate_threshold"] == 0.8
    # the heuristic supports both true answers (1.0) and refutes the Rome one (0.0): perfect over the scored rows
    assert a["measures"]["roc_auc"]["value"] == 1.0 and a["measures"]["roc_auc"]["n"] == 3
    assert a["suggested_threshold"] == 1.0 and a["youden_j"] == 1.0
    # the unscored bad row counted as predicted good: ranked above both good rows
    assert a["counted_wrong"]["roc_auc"]["value"] == 0.5 and a["counted_wrong"]["roc_auc"]["n"] == 4
    assert [(r["id"], r["label"], r["score"], r["unscored"]) for r in c["per_row"]] == [
        ("f1", 1.0, 1.0, None), ("f2", 1.0, 1.0, None), ("f3", 0.0, 0.0, None), ("f4", 0.0, None, "no_claims")]
    assert c["per_row"][0]["line"] == 1 and c["seconds_per_sample"] >= 0 and c["judge_calls"] == len(judge.calls)

    shown = " ".join(result.output.split())
    assert "ROC AUC" in shown and "suggested threshold 1.000 (gate 0.80)" in shown
    assert "unscored 1 (no_claims 1)" in shown
    text = md.read_text(encoding="utf-8")
    assert "| faith.jsonl | faithfulness | binary | 4 | 3 | 1 (no\\_claims 1) | ROC AUC | 1.000" in text


def test_graded_context_precision(tmp_path, judge):
    ranked = ["Paris is the capital and largest city of France by population.", "Bananas are yellow fruit.",
              "France has its capital in Paris, a large city."]
    rows = [{"id": f"g{i}", "question": "What is the capital city of France?", "contexts": ranked[:n],
             "answer": "", "reference": "Paris is the capital city of France.",
             "label": {"metric": "context_precision", "value": v, "kind": "graded"}}
            for i, (n, v) in enumerate([(1, 1.0), (2, 1.0), (3, 0.8333), (2, 0.5)], 1)]
    rows[3]["contexts"] = ranked[1:]  # the useless chunk ranked first
    out = tmp_path / "c.json"
    # JSON verdicts: the fake judge's yes/no per chunk gives these rows their exact average precision
    run([str(write_jsonl(tmp_path / "cp.jsonl", rows)), *FAST, "--metric-option", "context_precision.verdicts=json",
         "--out", str(out)])

    asked = judge.asked("judge_chunks")
    assert len(asked) == 4 and all("<reference>" in p.user for p in asked)
    assert {c.prompt.name for c in judge.calls} == {"judge_chunks"}
    [c] = read(out)["results"]
    assert (c["kind"], c["scored"], c["unscored"]) == ("graded", 4, 0)
    a = c["agreement"]
    assert set(a["measures"]) == {"spearman", "mae"} and a["suggested_threshold"] is None
    assert [r["score"] for r in c["per_row"]] == [1.0, 1.0, pytest.approx(0.8333, abs=1e-3), 0.5]
    assert a["measures"]["mae"]["value"] == pytest.approx(0.0, abs=1e-4)
    assert a["measures"]["spearman"]["value"] == pytest.approx(1.0)


def test_pairwise_answer_relevancy_and_limit_keeps_whole_pairs(tmp_path, judge):
    rows = (pair_rows("p1", "Paris is the capital of France.", "I am not sure, maybe ask someone else.")
            + pair_rows("p2", "The capital of France is Paris.", "I don't know.")
            + pair_rows("p3", "Paris.", "Paris."))
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    out = tmp_path / "c.json"
    run([str(data), *FAST, "--limit", "3", "--out", str(out)])

    asked = judge.asked("generate_questions")
    assert len(asked) == 4  # --limit 3: two whole pairs, never half a pair
    assert {c.prompt.name for c in judge.calls} == {"generate_questions", "check_question"}
    # each answer's question (the fake writes one, 3 times); a noncommittal answer's too, and the user's question:
    # its flag stands only when it does not reply to that
    assert len(judge.asked("check_question")) == 6
    [c] = read(out)["results"]
    assert (c["kind"], c["rows"], c["pairs"]) == ("pairwise", 4, 2)
    assert [r["id"] for r in c["per_row"]] == ["p1-a", "p1-b", "p2-a", "p2-b"]
    a = c["agreement"]
    assert set(a["measures"]) == {"pairwise_agreement"}
    assert a["measures"]["pairwise_agreement"]["value"] == 1.0  # the noncommittal answers score 0
    assert a["measures"]["pairwise_agreement"]["n"] == 2


def test_pairwise_ties_count_half(tmp_path, judge):
    out = tmp_path / "c.json"
    run([str(write_jsonl(tmp_path / "p.jsonl", pair_rows("p3", "Paris.", "Paris."))), *FAST, "--out", str(out)])
    assert read(out)["results"][0]["agreement"]["measures"]["pairwise_agreement"]["value"] == 0.5


def test_a_file_with_two_metrics_gives_one_result_each(tmp_path, judge):
    recall = {"id": "r1", "question": "Summarise.", "contexts": [CTX], "answer": "",
              "reference": "The Eiffel Tower is in Paris.",
              "label": {"metric": "context_recall", "value": 1, "kind": "binary"}}
    data = write_jsonl(tmp_path / "mixed.jsonl", [faith_row(1, "The Eiffel Tower is in Paris.", 1), recall])
    out = tmp_path / "c.json"
    run([str(data), *FAST, "--out", str(out)])
    results = read(out)["results"]
    assert [(c["metric"], c["rows"]) for c in results] == [("faithfulness", 1), ("context_recall", 1)]
    assert "only one class" in results[0]["agreement"]["measures"]["roc_auc"]["note"]


def test_context_precision_rows_with_neither_reference_nor_answer_are_judged_against_the_question(tmp_path, judge):
    rows = [{"id": f"w{i}", "question": "how old was sue lyon when she made lolita", "contexts": [c], "answer": "",
             "reference": None, "label": {"metric": "context_precision", "value": v, "kind": "binary"}}
            for i, (c, v) in enumerate([("Sue Lyon made Lolita when she was fourteen years old.", 1),
                                        ("Lolita is a 1962 film.", 0)])]
    out = tmp_path / "c.json"
    result = run([str(write_jsonl(tmp_path / "wikiqa.jsonl", rows)), *FAST, "--out", str(out)])
    assert [call.prompt.name for call in judge.calls] == ["judge_chunk", "judge_chunk"]
    assert all("<answer>" not in call.prompt.user and "<reference>" not in call.prompt.user for call in judge.calls)
    [c] = read(out)["results"]
    assert (c["scored"], c["unscored"]) == (2, 0)
    assert c["agreement"]["measures"]["roc_auc"]["value"] == 1.0  # the fake judge's word overlap ranks them right
    assert not c["notes"] and "rows unscored" not in " ".join(result.output.split())


def test_metric_option_scores_the_labels_with_another_metric(tmp_path, judge):
    row = faith_row(1, "The Eiffel Tower is in Paris.", 1)
    row["label"]["metric"] = "not_computed_here"
    data = write_jsonl(tmp_path / "other.jsonl", [row])
    r = run([str(data), *FAST], code=2)
    assert "line 1, field 'label.metric': unknown metric 'not_computed_here'" in r.output
    out = tmp_path / "c.json"
    run([str(data), *FAST, "--metric", "context_recall", "--out", str(out)])
    [c] = read(out)["results"]
    assert (c["metric"], c["label_metric"]) == ("context_recall", "not_computed_here")
    assert c["unscored_reasons"] == {"no_reference": 1}
    assert run([str(data), *FAST, "--metric", "bogus"], code=2).output.startswith("Error: unknown metric(s) bogus")


def test_a_rerun_is_answered_from_the_cache(tmp_path, monkeypatch):
    data = write_jsonl(tmp_path / "faith.jsonl", [faith_row(1, "The Eiffel Tower is in Paris.", 1),
                                                 faith_row(2, "The Eiffel Tower is in Rome.", 0)])
    first, second = FakeJudge(), FakeJudge()
    monkeypatch.setattr(judges, "get_judge", lambda spec=None, options=None: first)
    run([str(data), *FAST, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "1.json")])
    monkeypatch.setattr(judges, "get_judge", lambda spec=None, options=None: second)
    run([str(data), *FAST, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "2.json")])
    assert first.calls and second.calls == []
    one, two = read(tmp_path / "1.json")["results"][0], read(tmp_path / "2.json")["results"][0]
    assert one["agreement"] == two["agreement"] and two["cache_hits"] > 0
    assert not list((tmp_path / "state" / "runs").glob("*.jsonl"))  # checkpoints removed when done


# --- bad input --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("change, where, message", [
    (lambda r: r.pop("label"), "line 2, field 'label'", "missing: a labelled row needs label: {metric, value, kind}"),
    (lambda r: r.update(label="good"), "line 2, field 'label'", "expected an object {metric, value, kind}, got str"),
    (lambda r: r["label"].update(kind="ordinal"), "line 2, field 'label.kind'", "expected one of binary, graded"),
    (lambda r: r["label"].update(value=0.5), "line 2, field 'label.value'", "a binary label is 0 or 1, got 0.5"),
    (lambda r: r["label"].update(value="1"), "line 2, field 'label.value'", "expected a number, got str"),
    (lambda r: r.pop("answer"), "line 2, field 'answer'", "missing required field"),
    (lambda r: r.update(id="f1"), "line 2, field 'id'", "duplicate id 'f1'"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, judge, change, where, message):
    rows = [faith_row(1, "The Eiffel Tower is in Paris.", 1), faith_row(2, "It is in Rome.", 0)]
    change(rows[1])
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    r = run([str(data), *FAST], code=2)
    assert f"{data}, {where}: {message}" in r.output
    assert judge.calls == []


def test_graded_value_out_of_range(tmp_path):
    row = faith_row(1, "x", 1)
    row["label"] = {"metric": "faithfulness", "value": 1.5, "kind": "graded"}
    with pytest.raises(DatasetError, match=r"line 1, field 'label.value': a graded label is in \[0, 1\], got 1.5"):
        load_labelled(write_jsonl(tmp_path / "g.jsonl", [row]))


def test_bad_pairs(tmp_path):
    rows = pair_rows("p1", "a", "b")
    with pytest.raises(DatasetError, match="line 1, field 'pair': pair 'p1' has one row"):
        load_labelled(write_jsonl(tmp_path / "one.jsonl", rows[:1]))
    both = [rows[0], {**rows[1], "better": False}]
    with pytest.raises(DatasetError, match="line 2, field 'better': pair 'p1': exactly one"):
        load_labelled(write_jsonl(tmp_path / "both.jsonl", both))
    three = rows + [{**rows[0], "id": "p1-c"}]
    with pytest.raises(DatasetError, match="line 3, field 'pair': pair 'p1' has more than two rows"):
        load_labelled(write_jsonl(tmp_path / "three.jsonl", three))
    with pytest.raises(DatasetError, match="line 1, field 'better'"):
        load_labelled(write_jsonl(tmp_path / "nob.jsonl", [{k: v for k, v in rows[0].items() if k != "better"}]))


def test_missing_file_and_unsupported_extension(tmp_path):
    assert "file not found" in run([str(tmp_path / "nope.jsonl"), *FAST], code=2).output
    (tmp_path / "x.txt").write_text("{}\n")
    assert "unsupported file extension '.txt'" in run([str(tmp_path / "x.txt"), *FAST], code=2).output


def test_take_keeps_pairs_whole_and_order():
    rows = load_rows_for_take()
    assert [r.sample.id for r in take(rows, 1)] == ["b1"]
    assert [r.sample.id for r in take(rows, 2)] == ["b1", "p1-a", "p1-b"]  # the pair started within the limit
    assert [r.sample.id for r in take(rows, 4)] == ["b1", "p1-a", "b2", "p1-b"]
    assert take(rows, None) == rows


def load_rows_for_take():
    from localragas.quality.labelled import LabelledRow
    from localragas.data.schema import Sample

    def row(i, kind="binary", pair=None, better=None):
        return LabelledRow(None, Sample(id=i, question="q", answer="a"), "faithfulness", kind, 1.0, pair, better)

    return [row("b1"), row("p1-a", "pairwise", "p1", False), row("b2"), row("p1-b", "pairwise", "p1", True),
            row("b3")]


# --- real benchmark rows, read in place -------------------------------------------------------------------------------


def first_rows(name: str, n: int) -> list[dict]:
    with open(BENCHMARKS / name, encoding="utf-8") as f:
        return [json.loads(next(f)) for _ in range(n)]


@pytest.mark.skipif(not BENCHMARKS.is_dir(), reason="../shared/benchmarks is not present")
@pytest.mark.parametrize("name, metric, kind, prompt", [
    ("qags_faithfulness.jsonl", "faithfulness", "binary", "verify_statement"),  # the default: the answer's sentences
    ("answer_relevancy_pairwise_haluquestqa.jsonl", "answer_relevancy", "pairwise", "generate_questions"),
])
def test_first_six_rows_of_real_benchmark_files(tmp_path, judge, name, metric, kind, prompt):
    out = tmp_path / "c.json"
    run([str(BENCHMARKS / name), *FAST, "--limit", "6", "--out", str(out)])
    expected = first_rows(name, 6)
    [c] = read(out)["results"]
    assert (c["metric"], c["kind"], c["rows"], c["file"]) == (metric, kind, 6, str(BENCHMARKS / name))
    assert [r["id"] for r in c["per_row"]] == [r["id"] for r in expected]
    assert [r["label"] for r in c["per_row"]] == [float(r["better"] if kind == "pairwise" else r["label"]["value"])
                                                  for r in expected]
    assert c["scored"] + c["unscored"] == 6
    asked = judge.asked(prompt)
    shown = [t for p in asked for t in (_between(p.user, "statement") or [p.user])]  # a sentence, else the prompt
    assert asked and all(any(r["answer"][:40] in t or t in r["answer"] for r in expected) for t in shown)
    assert {p.name for p in (call.prompt for call in judge.calls)} <= {"extract_claims", "verify_statement",
                                                                        "generate_questions", "check_question"}
    a = c["agreement"]
    for figure in a["measures"].values():
        assert set(figure) == {"value", "ci_low", "ci_high", "n", "note"}
        if figure["value"] is not None and figure["ci_low"] is not None:
            assert figure["ci_low"] <= figure["value"] <= figure["ci_high"]
    if kind == "pairwise":
        assert c["pairs"] == 3 and a["rows"] == 3
    else:
        assert set(a["measures"]) == {"roc_auc", "balanced_accuracy_at_gate", "balanced_accuracy_at_best"}


def test_no_cache_writes_no_cache(tmp_path, judge):
    data = write_jsonl(tmp_path / "faith.jsonl", [faith_row(1, "The Eiffel Tower is in Paris.", 1)])
    run([str(data), *FAST, "--no-cache", "--no-resume"])
    assert judge.calls and not (tmp_path / "state" / "cache").exists()


@pytest.mark.parametrize("mode", MODES)
def test_metric_option_picks_the_verdicts_and_is_recorded(tmp_path, judge, mode):
    data = write_jsonl(tmp_path / "faith.jsonl", [
        faith_row(1, "The Eiffel Tower is in Paris.", 1),
        faith_row(2, "The Eiffel Tower is in Rome, built by Caesar himself.", 0),
    ])
    out = tmp_path / "calib.json"
    run([str(data), *FAST, "--metric-option", f"faithfulness.verdicts={mode}", "--out", str(out)])
    assert {c.prompt.name for c in judge.calls} == {SUPPORT_CALL[mode]}  # the default: sentences, no extraction
    got = read(out)
    recorded = got["results"][0]["metric_options"]  # every option of the metric, the defaults too
    assert recorded["verdicts"] == mode
    assert recorded == dict(all_metrics()["faithfulness"].with_options(verdicts=mode).options)
    assert got["meta"]["metric_options"] == {"faithfulness": {"verdicts": mode}}
    scores = {r["id"]: r["score"] for r in got["results"][0]["per_row"]}
    assert scores["f2"] < scores["f1"] <= 1
    if mode == "probability":
        assert 0 < scores["f2"]  # graded: the heuristic's word overlap


def test_a_bad_metric_option_is_refused_before_any_judging(tmp_path, judge):
    data = write_jsonl(tmp_path / "faith.jsonl", [faith_row(1, "The Eiffel Tower is in Paris.", 1)])
    result = run([str(data), *FAST, "--metric-option", "faithfulness.verdicts=maybe"], code=2)
    assert "verdicts must be one of probability, json" in result.output and judge.calls == []
