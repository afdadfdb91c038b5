"""`localragas review RUN.json` (localragas/cli/review.py) through the CLI: the terminal flow driven by scripted keys
(stdin is no terminal here, so a line a key), resuming where the reviewer stopped, two reviewers, the spreadsheet round
trip (--export, --import) and its refusals, and the errors of a report it cannot review."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from localragas.quality.review_session import drawn
from localragas.report import read_json

from cli_helpers import cli, reviewable_run


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return reviewable_run(tmp_path_factory.mktemp("run"))


@pytest.fixture
def run(made, tmp_path) -> Path:
    """A fresh copy of the run (its labels file beside it starts empty)."""
    return Path(shutil.copy(made, tmp_path / "run.json"))


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def keys_in_order(run: Path, n: int, **kw) -> list[str]:
    return [s.item.key for s in drawn(read_json(run), n=n, **kw)]


def test_three_labels_then_quit_then_the_same_command_resumes_at_the_fourth(run):
    order = keys_in_order(run, 3)
    total = len(order)
    first = cli("review", run, "--n", 3, "--reviewer", "alice", input="y\nn\nc\nthe chunk is off-topic\ns\nq\n")
    assert first.exit_code == 0, first.output
    assert f"0 of {total} done" in first.output and f"1/{total}" in first.output
    assert f"stopped: 3 of {total} done" in first.output
    labels = run.with_name("run.labels.jsonl")  # the default: beside the report
    got = lines(labels)
    assert [x["key"] for x in got] == order[:3]
    assert [x["label"] for x in got] == [1, 0, None] and got[2]["note"] == "the chunk is off-topic"
    for x in got:
        assert x["reviewer"] == "alice" and x["time"].endswith("+00:00")
        assert x["design"]["seed"] == 0 and x["design"]["draws"] and 0 < x["design"]["p"] <= 1
    second = cli("review", run, "--n", 3, "--reviewer", "alice", input="y\nq\n")
    assert second.exit_code == 0, second.output
    assert f"3 of {total} done" in second.output
    assert f"── 4/{total}" in second.output and f"── 1/{total}" not in second.output
    got = lines(labels)
    assert len(got) == 4 and got[3]["key"] == order[3] and got[3]["label"] == 1


def test_the_end_of_the_input_stops_as_q_does_and_every_item_done_says_what_next(run):
    total = len(keys_in_order(run, 2, metrics=["faithfulness"]))
    r = cli("review", run, "--n", 2, "-m", "faithfulness", "--reviewer", "alice", input="y\n")
    assert r.exit_code == 0 and "stopped: 1 of" in r.output
    r = cli("review", run, "--n", 2, "-m", "faithfulness", "--reviewer", "alice", input="n\n" * total)
    assert r.exit_code == 0, r.output
    assert f"all {total} items done" in r.output
    assert f"localragas report {run} --labels {run.with_name('run.labels.jsonl')}" in r.output
    again = cli("review", run, "--n", 2, "-m", "faithfulness", "--reviewer", "alice", input="")
    assert f"{total} of {total} done" in again.output and "── " not in again.output


def test_back_relabels_the_previous_item_and_the_judge_is_hidden_unless_asked(run):
    r = cli("review", run, "--n", 2, "--reviewer", "alice", input="y\nb\nn\nq\n")
    assert r.exit_code == 0, r.output
    got = lines(run.with_name("run.labels.jsonl"))
    assert [x["label"] for x in got] == [1, 0] and got[0]["key"] == got[1]["key"]  # the later line corrects
    assert "(labelled supported before; a new label replaces it)" in r.output
    assert "the judge said" not in r.output
    shown = cli("review", run, "--n", 2, "--reviewer", "bob", "--show-judge", input="q\n")
    assert "Judge: the judge said" in shown.output


def test_two_reviewers_on_one_file_each_resume_their_own_and_on_two_files_keep_their_own(run, tmp_path):
    total = len(keys_in_order(run, 2))
    shared = tmp_path / "shared.jsonl"
    assert cli("review", run, "--n", 2, "--labels", shared, "--reviewer", "alice", input="y\ny\nq\n").exit_code == 0
    bob = cli("review", run, "--n", 2, "--labels", shared, "--reviewer", "bob", input="n\nq\n")
    assert f"0 of {total} done" in bob.output  # alice's labels are not bob's
    got = lines(shared)
    assert [(x["reviewer"], x["label"]) for x in got] == [("alice", 1), ("alice", 1), ("bob", 0)]
    assert got[2]["key"] == got[0]["key"]  # bob double-checks the same first item
    again = cli("review", run, "--n", 2, "--labels", shared, "--reviewer", "alice", input="q\n")
    assert f"2 of {total} done" in again.output
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    cli("review", run, "--n", 2, "--labels", a, "--reviewer", "alice", input="y\nq\n")
    cli("review", run, "--n", 2, "--labels", b, "--reviewer", "bob", input="n\nn\nq\n")
    assert {x["reviewer"] for x in lines(a)} == {"alice"} and len(lines(a)) == 1
    assert {x["reviewer"] for x in lines(b)} == {"bob"} and len(lines(b)) == 2


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_export_fill_import_round_trip_then_the_terminal_resumes_after_the_imported(run, tmp_path):
    items = tmp_path / "items.csv"
    shown = [s.item for s in drawn(read_json(run), n=3)]
    order = [item.key for item in shown]
    r = cli("review", run, "--n", 3, "--export", items)
    assert r.exit_code == 0, r.output
    rows = read_rows(items)
    assert [row["key"] for row in rows] == order
    assert all(row["text"] for row in rows) and all(row["label"] == "" for row in rows)
    header = list(rows[0])
    assert header[header.index("question"):header.index("label") + 1] == [
        "question", "contexts", "answer", "reference", "label"]
    for row, item in zip(rows, shown):  # what a reviewer reads to judge the item, beside it
        assert item.contexts and row["contexts"] == "\n\n".join(f"[{k}] {c}" for k, c in enumerate(item.contexts, 1))
        assert row["answer"] == (item.answer or "") and row["reference"] == (item.reference or "")
    assert any(row["answer"] for row in rows)
    for row in rows:  # a CSV without them (an older export) still imports: they are read, never needed
        for col in ("contexts", "answer", "reference"):
            del row[col]
    rows[0].update(label="yes", reviewer="carol", note="fine")
    rows[1].update(label="0", reviewer="")  # the reviewer cell left empty: --reviewer
    rows[2].update(label="skip", reviewer="carol")
    write_rows(items, rows)
    r = cli("review", run, "--n", 3, "--import", items, "--reviewer", "carol")
    assert r.exit_code == 0, r.output
    assert "imported 3 labels" in r.output
    got = lines(run.with_name("run.labels.jsonl"))
    assert [(x["key"], x["label"], x["reviewer"]) for x in got] == [
        (order[0], 1, "carol"), (order[1], 0, "carol"), (order[2], None, "carol")]
    assert got[0]["note"] == "fine" and all(x["design"]["seed"] == 0 for x in got)
    again = cli("review", run, "--n", 3, "--import", items, "--reviewer", "carol")
    assert "imported 0 labels" in again.output and "(3 already there)" in again.output
    assert len(lines(run.with_name("run.labels.jsonl"))) == 3
    resumed = cli("review", run, "--n", 3, "--reviewer", "carol", input="q\n")
    assert f"3 of {len(order)} done" in resumed.output and f"── 4/{len(order)}" in resumed.output


def test_a_malformed_csv_row_exits_2_naming_the_row_and_column_and_imports_nothing(run, tmp_path):
    items = tmp_path / "items.csv"
    cli("review", run, "--n", 3, "--export", items)
    rows = read_rows(items)
    rows[0].update(label="1", reviewer="carol")
    rows[1].update(label="maybe", reviewer="carol")
    write_rows(items, rows)
    r = cli("review", run, "--n", 3, "--import", items)
    assert r.exit_code == 2
    assert "items.csv, row 3, column 'label'" in r.output and "maybe" in r.output
    assert "Traceback" not in r.output
    assert not run.with_name("run.labels.jsonl").exists()


def test_an_imported_row_of_another_runs_item_exits_2_naming_its_row(run, tmp_path):
    items = tmp_path / "items.csv"
    cli("review", run, "--n", 3, "--export", items)
    rows = read_rows(items)
    for row in rows[:2]:
        row.update(label="1", reviewer="carol")
    sid, metric, index, _ = rows[1]["key"].split("|")
    rows[1]["key"] = f"{sid}|{metric}|{index}|0000000000000000"  # the item's text changed since
    write_rows(items, rows)
    r = cli("review", run, "--n", 3, "--import", items)
    assert r.exit_code == 2 and "row 3" in r.output and "key" in r.output and "not one of this run" in r.output
    assert not run.with_name("run.labels.jsonl").exists()


def test_a_report_without_sample_text_exits_2_saying_how_to_fix_it_and_data_fixes_it(run):
    report = json.loads(run.read_text(encoding="utf-8"))
    for s in report["samples"]:
        s.pop("input", None)
    run.write_text(json.dumps(report), encoding="utf-8")
    r = cli("review", run, "--n", 2, input="q\n")
    assert r.exit_code == 2
    assert "--no-sample-text" in r.output and "--data" in r.output and "Traceback" not in r.output
    data = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
    r = cli("review", run, "--n", 2, "--data", data, "--reviewer", "alice", input="y\nq\n")
    assert r.exit_code == 0, r.output
    assert len(lines(run.with_name("run.labels.jsonl"))) == 1


def test_a_run_without_a_reviewable_metric_exits_2_naming_the_ones_review_checks(tmp_path):
    run = reviewable_run(tmp_path, "-m", "answer_relevancy")
    r = cli("review", run, input="q\n")
    assert r.exit_code == 2
    assert all(m in r.output for m in ("faithfulness", "context_recall", "context_precision"))
    assert "answer_relevancy" in r.output
    bad = cli("review", run, "-m", "answer_relevancy")
    assert bad.exit_code == 2 and "context_precision" in bad.output


def test_modes_cannot_be_combined(run, tmp_path):
    r = cli("review", run, "--plan", "--export", tmp_path / "x.csv")
    assert r.exit_code == 2 and "--export and --plan cannot be given together" in r.output


def test_one_metric_only_with_its_own_count_of_draws(run):
    r = cli("review", run, "-m", "context_recall", "--n", 4, "--reviewer", "alice", input="q\n")
    total = len(keys_in_order(run, 4, metrics=["context_recall"]))
    assert r.exit_code == 0 and f"{total} items (context_recall {total})" in r.output
    assert "context_recall · sample" in r.output and "faithfulness · sample" not in r.output
    cli("review", run, "-m", "faithfulness", "--n", 2, "--reviewer", "alice", input="y\ny\nq\n")
    other = cli("review", run, "-m", "context_recall", "--n", 4, "--reviewer", "alice", input="q\n")
    assert f"(2 lines of {run.with_name('run.labels.jsonl')} are on other items" in other.output
    assert f"0 of {total} done" in other.output
