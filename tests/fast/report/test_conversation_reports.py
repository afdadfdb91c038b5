"""What a run of conversations reports (data/conversation_summary.py): a row per conversation (its turns, each metric's
mean and worst turn, the turns a metric does not apply to counted apart) in the terminal, JSON, CSV, Markdown, JUnit,
MLflow and the frames; a run of single samples reports as before."""
from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest

from localragas.data.conversation_summary import (conversation_groups, mean_text, worst_conversations,
                                                  worst_turn_text)
from localragas.report.json_report import read_json

from cli_helpers import EXAMPLES, chat_run, cli
from reports_helpers import make_report


def test_eval_of_conversations_writes_their_rows_in_every_format(tmp_path):
    paths = {k: tmp_path / f"r.{k}" for k in ("csv", "md", "junit")}
    out = chat_run(tmp_path, "--no-gate", "--csv", paths["csv"], "--md", paths["md"], "--junit", paths["junit"])
    report = json.loads(out.read_text(encoding="utf-8"))

    # JSON: a conversations block after the samples, a row per conversation in the order they first appear
    assert list(report)[-3:] == ["samples", "conversations", "skipped"]
    plans, lisbon = report["conversations"]
    assert plans["conversation"] == "plans" and plans["turns"] == 2 and plans["turn_ids"] == ["plans#1", "plans#2"]
    values = {s["id"]: s["metrics"]["context_precision"]["value"] for s in report["samples"]}
    precision = plans["metrics"]["context_precision"]
    assert precision["mean"] == round((values["plans#1"] + values["plans#2"]) / 2, 6)
    assert (precision["worst"], precision["worst_turn"]) == (values["plans#2"], "plans#2") and values["plans#2"] < 1
    recall = lisbon["metrics"]["context_recall"]  # no reference: missing data, not "not applicable"
    assert recall["mean"] is None and recall["unscored"] == 1 and recall["not_applicable"] == 0
    assert lisbon["turns"] == 1 and lisbon["turn_ids"][0].endswith("#1")

    # CSV: each turn's conversation and number after its category
    rows = list(csv.reader(paths["csv"].open(encoding="utf-8")))
    assert rows[0][:5] == ["id", "category", "conversation", "turn", "question"]
    assert [r[2:4] for r in rows[1:]] == [["plans", "1"], ["plans", "2"], [lisbon["conversation"], "1"]]

    # Markdown: the worst conversations, worst first (the Lisbon one: answer relevancy lowest)
    md = paths["md"].read_text(encoding="utf-8")
    assert "**conversations: 2, the worst first" in md
    table = [line for line in md.splitlines() if line.startswith("| plans ") or line.startswith("| c-")]
    assert table[0].startswith(f"| {lisbon['conversation']} | 1 |") and table[1].startswith("| plans | 2 |")

    # JUnit: the gate's suite, then a suite per conversation with a passing case per turn
    root = ET.parse(paths["junit"]).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["localragas", "conversation plans",
                                              f"conversation {lisbon['conversation']}"]
    assert [c.get("name") for c in suites[1].findall("testcase")] == ["plans#1", "plans#2"]
    assert not suites[1].findall(".//failure") and not suites[1].findall(".//error")
    assert root.get("tests") == str(len(report["metrics"]) + 3)
    assert "context_recall unscored (no_reference)" in suites[1].find("testcase/system-out").text


def test_the_terminal_lists_the_worst_conversations_and_report_reads_them_back(tmp_path):
    out = chat_run(tmp_path)
    r = cli("report", out, "--no-gate", "--out", tmp_path / "again.json")
    assert r.exit_code == 0, r.output
    assert "conversations: 2, the worst first (by the lowest mean of any metric" in r.output
    lines = [line for line in r.output.splitlines() if "plans#2: context_precision" in line]
    assert len(lines) == 1 and "│ plans " in lines[0]  # its worst turn, by its lowest score of any metric
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert again["conversations"] == json.loads(out.read_text(encoding="utf-8"))["conversations"]


def test_a_run_of_single_samples_reports_as_before(tmp_path):
    out, table = tmp_path / "r.json", tmp_path / "r.csv"
    r = cli("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-history", "--no-gate",
            "--limit", "3", "--out", out, "--csv", table, "--junit", tmp_path / "r.xml")
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "conversations" not in report and "conversations" not in report["meta"]
    assert report["meta"]["ci"]["resampled"] == "samples"
    assert next(csv.reader(table.open(encoding="utf-8")))[:3] == ["id", "category", "question"]
    assert len(ET.parse(tmp_path / "r.xml").getroot().findall("testsuite")) == 1
    assert "conversations:" not in r.output
    assert list(read_json(out).to_pandas().columns[:3]) == ["id", "category", "question"]


def _turns():
    """Two conversations and a single sample: knowledge retention and conversation completeness unscored where they
    do not apply, context recall where the reference is missing, noise sensitivity lower-is-better."""
    na, end = "no_earlier_turn", "no_conversation_end"
    return make_report({
        "c#1": {"knowledge_retention": na, "conversation_completeness": end, "context_recall": None,
                "noise_sensitivity_relevant": 0.1},
        "c#2": {"knowledge_retention": 0.8, "conversation_completeness": end, "context_recall": None,
                "noise_sensitivity_relevant": 0.7},
        "c#3": {"knowledge_retention": 0.4, "conversation_completeness": 0.9, "context_recall": None,
                "noise_sensitivity_relevant": 0.3},
        "d#1": {"knowledge_retention": na, "conversation_completeness": 0.2, "context_recall": 1.0,
                "noise_sensitivity_relevant": 0.0},
        "single": {"knowledge_retention": "no_conversation", "conversation_completeness": "no_conversation",
                   "context_recall": 0.5, "noise_sensitivity_relevant": 0.5},
    }, turns=True)


def test_metrics_that_do_not_apply_are_counted_apart_not_as_missing_data():
    c, d = _turns().conversations()
    retention, completeness, recall = (c.metrics[m] for m in ("knowledge_retention", "conversation_completeness",
                                                              "context_recall"))
    assert (retention.mean, retention.worst, retention.worst_turn) == (0.6, 0.4, "c#3")
    assert (retention.not_applicable, retention.unscored) == (1, 0)
    assert (completeness.mean, completeness.scored, completeness.not_applicable) == (0.9, 1, 2)  # its last turn's
    assert (recall.scored, recall.unscored, recall.not_applicable) == (0, 3, 0)
    assert mean_text(recall) == "—" and mean_text(d.metrics["knowledge_retention"]) == "n/a"
    noise = c.metrics["noise_sensitivity_relevant"]  # lower is better: its worst turn is its highest
    assert (noise.worst, noise.worst_turn) == (0.7, "c#2")
    assert d.turns == 1 and [x.conversation for x in _turns().conversations()] == ["c", "d"]  # "single": no row


def test_the_worst_conversations_rank_by_their_lowest_mean_and_name_their_worst_turn():
    report = _turns()
    rows, count = worst_conversations(report, 1)
    assert count == 2 and [r.conversation for r in rows] == ["d"]  # its completeness 0.2 < c's lowest, 1 - 0.367
    assert worst_turn_text(rows[0], {"noise_sensitivity_relevant"}) == "d#1: conversation_completeness 0.200"
    assert [r.conversation for r in worst_conversations(report, 5)[0]] == ["d", "c"]


def test_turns_of_a_conversation_apart_in_the_results_still_make_one_row():
    results = list(_turns().samples)
    mixed = [results[0], results[3], results[4], results[1], results[2]]  # c#1, d#1, single, c#2, c#3
    assert [(name, [t.id for t in turns]) for name, turns in conversation_groups(mixed)] == [
        ("c", ["c#1", "c#2", "c#3"]), ("d", ["d#1"])]
    cut = [results[0], results[1]]  # a run cut short: c's third turn never came
    assert [(name, len(turns)) for name, turns in conversation_groups(cut)] == [("c", 2)]


def test_frames_of_turns_and_conversations():
    report = _turns()
    turns = report.to_pandas()
    assert list(turns.columns[:4]) == ["id", "category", "conversation", "turn"]
    assert turns["conversation"].tolist()[:4] == ["c", "c", "c", "d"] and turns["turn"].tolist()[:4] == [1, 2, 3, 1]
    assert turns["conversation"].isna().tolist() == [False] * 4 + [True]  # the single sample: in none
    frame = report.conversations_frame()
    assert frame["conversation"].tolist() == ["c", "d"] and frame["turns"].tolist() == [3, 1]
    assert frame.loc[0, "knowledge_retention"] == 0.6 and frame.loc[0, "knowledge_retention_worst_turn"] == "c#3"
    assert frame["conversation_completeness"].tolist() == [0.9, 0.2]


def test_mlflow_logs_the_turns_and_the_conversations_as_tables(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    from localragas.integrations.mlflow import log_report

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = (tmp_path / "mlruns").as_uri()
    run_id = log_report(read_json(chat_run(tmp_path)), tracking_uri=store, experiment="chats")
    client = mlflow.MlflowClient(store)
    assert client.get_run(run_id).data.metrics["conversations"] == 2
    turns = json.loads(open(client.download_artifacts(run_id, "localragas/turns.json", str(tmp_path))).read())
    assert turns["columns"][:4] == ["id", "category", "conversation", "turn"]
    assert [row[2:4] for row in turns["data"]][:2] == [["plans", 1], ["plans", 2]]
    talks = json.loads(open(client.download_artifacts(run_id, "localragas/conversations.json", str(tmp_path))).read())
    assert [row[0] for row in talks["data"]] == ["plans", talks["data"][1][0]] and len(talks["data"]) == 2
