"""A field name no field reads (issue 36): a near miss of a field the row lacks ("refrence" and no reference) is an
input error naming the line and the name it probably meant, never a metric left "not evaluated" while the gate
passes; any other name is listed once as ignored. A metric asked for by name that no row can score, and an empty
input given in Python, are input errors too; assert_gate fails a report with no scored sample."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import localragas
from localragas.core.errors import DatasetError
from localragas.data.dataset import load_samples
from localragas.data.schema import Report
from localragas.judges.fake import FakeJudge
from localragas.run.regate import regate
from localragas.testing import GateNotEvaluatedWarning, assert_gate

from cli_helpers import cli, sample_rows, write_file, write_jsonl

pytest_plugins = ["pytester"]

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def misspelled(n: int = 3, at: int = 2, name: str = "refrence") -> list[dict]:
    """n rows that every metric can score; row `at` (from 0) has its reference under `name`."""
    rows = sample_rows(n)
    rows[at][name] = rows[at].pop("reference")
    return rows


def report_of(path: Path) -> Report:
    return Report.model_validate_json(path.read_text(encoding="utf-8"))


# --- a near miss is an input error ---------------------------------------------------------------------------------

def test_a_misspelled_field_exits_2_naming_the_line_the_field_and_the_name_meant(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", misspelled())
    r = cli("eval", data, *FAST)
    assert r.exit_code == 2, r.output
    assert f"Error: {data}, line 3, field 'refrence': unknown field; did you mean 'reference'?" in r.output
    assert "quality gate" not in r.output  # refused before any judging


def test_with_every_row_misspelled_the_gate_no_longer_passes_with_context_recall_not_evaluated(tmp_path):
    rows = sample_rows(3)
    for row in rows:
        row["refrence"] = row.pop("reference")
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    r = cli("eval", data, *FAST, "-t", "answer_relevancy=0")
    assert r.exit_code == 2, r.output
    assert f"Error: {data}, line 1, field 'refrence': unknown field; did you mean 'reference'?" in r.output


@pytest.mark.parametrize("name, meant", [
    ("Reference", "reference"), ("ground_truths", "ground_truth"), ("ground truth", "ground_truth"),
    ("expected_ouput", "expected_output"), ("refernce", "reference"),
])
def test_near_misses_of_localragas_ragas_and_deepeval_names(tmp_path, name, meant):
    data = write_jsonl(tmp_path / "d.jsonl", misspelled(name=name))
    with pytest.raises(DatasetError) as e:
        load_samples(data)
    assert str(e.value).startswith(f"{data}, line 3, field '{name}': unknown field; did you mean '{meant}'?")


@pytest.mark.parametrize("name, candidates, meant", [
    ("questoin", ["question", "user_input", "input", "query"], "question"),
    ("retrieved_context", ["contexts", "retrieved_contexts", "retrieval_context"], "retrieved_contexts"),
    ("userInput", ["question", "user_input"], "user_input"),
    ("langauge", ["language"], "language"),
    ("output", ["question", "user_input", "input", "query"], None),  # two edits from a 5-letter name: too far
    ("categories", ["category"], None),
    ("reference_ids", ["reference", "ground_truth"], None),
    ("idx", ["id"], None),
])
def test_what_counts_as_a_near_miss(name, candidates, meant):
    from localragas.data.field_check import near_miss  # noqa: PLC0415

    assert near_miss(name, candidates) == meant


def test_a_near_miss_row_is_skipped_with_its_reason_under_skip_invalid(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", misspelled())
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "--skip-invalid", "-t", "answer_relevancy=0", "--out", out)
    assert r.exit_code == 0, r.output
    report = report_of(out)
    assert [s.id for s in report.samples] == ["s0", "s1"]
    assert [(k.line, k.field) for k in report.skipped] == [(3, "refrence")]
    assert report.skipped[0].reason.startswith("unknown field; did you mean 'reference'?")


def test_a_misspelled_csv_column_is_one_error_even_with_skip_invalid(tmp_path):
    data = write_file(tmp_path, "d.csv", "id,question,contexts,answer,refrence\n"
                                         "a,Q1?,\"[\"\"c\"\"]\",A.,R.\nb,Q2?,\"[\"\"c\"\"]\",A.,R.\n")
    for extra in ([], ["--skip-invalid"]):
        r = cli("eval", data, *FAST, *extra)
        assert r.exit_code == 2, r.output
        assert f"Error: {data}, field 'refrence': unknown column; did you mean 'reference'?" in r.output


def test_python_rows_and_a_dataframe_name_the_row_or_the_column():
    rows = misspelled()
    with pytest.raises(DatasetError, match=r"^samples, row 3, field 'refrence': unknown field; did you mean "
                                           r"'reference'\?"):
        localragas.evaluate(rows, judge="fake", embedder="fake", cache=False)
    with pytest.raises(DatasetError, match=r"^DataFrame, field 'refrence': unknown column; did you mean "
                                           r"'reference'\?"):
        localragas.evaluate(pd.DataFrame(rows).drop(columns="reference"), judge="fake", embedder="fake", cache=False)


def test_the_column_mapping_is_followed(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [dict(r, refrence=r.pop("reference")) for r in sample_rows(2)])
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "--columns", "reference=refrence", "-m", "context_recall", "--out", out)
    assert r.exit_code == 0, r.output
    assert all(s.metrics["context_recall"].scored for s in report_of(out).samples)
    assert "ignored_fields" not in report_of(out).meta


def test_a_near_miss_beside_its_field_is_only_listed_as_ignored(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [dict(r, refrence="an old one") for r in sample_rows(2)])
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "-t", "answer_relevancy=0", "--out", out)
    assert r.exit_code == 0, r.output
    assert report_of(out).meta["ignored_fields"] == ["refrence"]


# --- other names are listed once as ignored ------------------------------------------------------------------------

def test_other_fields_are_listed_once_as_ignored_in_the_terminal_and_every_report(tmp_path):
    rows = sample_rows(3)
    rows[0]["notes"], rows[1]["meta_source"], rows[2]["notes"] = "n", "s", "again"
    for r in rows:  # read, or known and left unread on purpose: never listed
        r.update(meta={"kind": "single"}, metadata={"a": 1}, reference_contexts=["c"], category="x")
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out, md, html, junit = (tmp_path / n for n in ("r.json", "r.md", "r.html", "r.xml"))
    r = cli("eval", data, *FAST, "-t", "answer_relevancy=0", "--out", out, "--md", md, "--html", html,
            "--junit", junit)
    assert r.exit_code == 0, r.output
    assert r.output.count("ignored fields: notes, meta_source") == 1
    assert report_of(out).meta["ignored_fields"] == ["notes", "meta_source"]
    assert r"ignored fields: notes, meta\_source" in md.read_text(encoding="utf-8")
    assert "ignored_fields" in html.read_text(encoding="utf-8")
    assert 'name="ignored_fields" value="notes, meta_source"' in junit.read_text(encoding="utf-8")
    assert "ignored fields: notes, meta_source" in cli("report", out).output  # a stored report shows it too
    report = localragas.evaluate(rows, judge="fake", embedder="fake", cache=False)
    assert report.meta["ignored_fields"] == ["notes", "meta_source"] and "ignored fields" in repr(report)


@pytest.mark.parametrize("name", ["rag_samples.jsonl", "rag_samples_zh.jsonl"])
def test_the_examples_evaluate_with_nothing_ignored(tmp_path, name):
    out = tmp_path / "r.json"
    r = cli("eval", EXAMPLES / name, *FAST, "--no-gate", "--out", out)
    assert r.exit_code == 0, r.output
    report = report_of(out)
    assert len(report.samples) == {"rag_samples.jsonl": 16, "rag_samples_zh.jsonl": 8}[name]
    assert "ignored_fields" not in report.meta


# --- a metric asked for by name that no row can score --------------------------------------------------------------

def test_a_metric_named_that_no_row_can_score_exits_2_before_any_judge_call(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{k: v for k, v in r.items() if k != "reference"}
                                              for r in sample_rows(2)])
    r = cli("eval", data, *FAST, "-m", "faithfulness,context_recall")
    assert r.exit_code == 2, r.output
    assert (f"Error: {data}, field 'reference': no row has it, and context_recall (asked for by name) needs it"
            in r.output)
    judge = FakeJudge()
    with pytest.raises(DatasetError, match="context_recall"):
        localragas.evaluate(data, metrics=["context_recall"], judge=judge, embedder="fake", cache=False)
    assert judge.calls == []


def test_a_default_metric_no_row_can_score_is_shown_not_evaluated_on_the_gate_line(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{k: v for k, v in r.items() if k != "reference"}
                                              for r in sample_rows(2)])
    r = cli("eval", data, *FAST, "-t", "answer_relevancy=0")
    assert r.exit_code == 0, r.output
    assert "quality gate PASSED, not evaluated: context_recall" in r.output
    assert "context_recall: not evaluated (no row has a reference)" in r.output


def test_a_shard_with_no_reference_is_run_when_the_input_has_one(tmp_path):
    rows = sample_rows(4)
    for r in rows[:2]:
        del r["reference"]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "s.json"
    r = cli("eval", data, *FAST, "-m", "context_recall", "--shard", "1/2", "--out", out)  # rows 1 and 3
    assert r.exit_code == 0, r.output
    r = cli("eval", data, *FAST, "--shard", "9/9", "--out", out)  # an empty shard still runs, for merge
    assert r.exit_code == 0, r.output
    assert report_of(out).samples == []


# --- an empty input in Python, and assert_gate on a report with no scored sample ---------------------------------

@pytest.mark.parametrize("empty", [[], pd.DataFrame(columns=["question", "contexts", "answer"])],
                         ids=["list", "DataFrame"])
def test_an_empty_input_is_refused_in_python_as_on_the_command_line(tmp_path, empty):
    with pytest.raises(ValueError, match="no samples") as e:
        localragas.evaluate(empty, judge="fake", embedder="fake", cache=False)
    assert isinstance(e.value, DatasetError)
    r = cli("eval", write_file(tmp_path, "empty.jsonl", ""), *FAST)
    assert r.exit_code == 2 and "no samples" in r.output


def test_assert_gate_fails_a_report_with_no_scored_sample():
    rows = [{k: v for k, v in r.items() if k != "reference"} for r in sample_rows(2)]
    report = localragas.evaluate(rows, judge="fake", embedder="fake", cache=False, thresholds={"answer_relevancy": 0})
    with pytest.warns(GateNotEvaluatedWarning, match="context_recall"):
        assert_gate(report)  # three metrics scored: it passes, context_recall not evaluated
    only_recall = report.model_copy(update={"metrics": ["context_recall"], "samples": [
        s.model_copy(update={"metrics": {"context_recall": s.metrics["context_recall"]}}) for s in report.samples]})
    nothing = regate(only_recall, {"context_recall": 0.5})
    assert nothing.gate.passed and nothing.gate.evaluated  # every sample lacked a reference: "not evaluated"
    with pytest.raises(AssertionError, match="checked nothing: no scored sample"):
        assert_gate(nothing)


def test_the_pytest_fixture_refuses_an_empty_input(pytester):
    pytester.makepyfile(test_empty="""
from localragas.run.regate import regate
from localragas.testing import GateNotEvaluatedWarning, assert_gate

def test_empty(evaluate):
    assert_gate(evaluate([]))
""")
    r = pytester.runpytest("--localragas-judge", "fake", "--localragas-embedder", "fake", "--localragas-no-cache")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*DatasetError: samples: no samples*"])
