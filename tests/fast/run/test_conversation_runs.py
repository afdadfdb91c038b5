"""A run of conversations through the commands and tools around a run: compare, the run history (`runs`, `view`) and
the pytest plugin's `evaluate` fixture, on examples/chat_samples.jsonl with the fake judge."""
from __future__ import annotations

import json

from localragas.core.paths import history_file
from localragas.run.history import History
from localragas.run.history_record import as_report

from cli_helpers import CHATS, chat_run, cli

pytest_plugins = ["pytester"]


def test_compare_pairs_the_turns_of_two_runs_of_conversations(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    base, new = chat_run(tmp_path / "a"), chat_run(tmp_path / "b")
    r = cli("compare", base, new, "--out", tmp_path / "c.json", "--min-pairs", "2")
    assert r.exit_code == 0, r.output
    c = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert c["in_both"] == 3 and not c["only_in_base"] and not c["warnings"]
    faith = next(m for m in c["metrics"] if m["metric"] == "faithfulness")
    assert faith["pairs"] == 3 and faith["diff"] == 0.0 and faith["verdict"] == "within_noise"


def test_the_history_keeps_each_turns_conversation_for_runs_and_view(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        out = tmp_path / name / "chats.json"
        r = cli("eval", CHATS, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-gate",
                "--out", out)
        assert r.exit_code == 0, r.output
    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    runs = [json.loads(line) for line in listed.output.splitlines()]
    assert len(runs) == 2 and runs[0]["rows"] == 3
    shown = cli("runs", "show", str(runs[0]["id"]))
    assert shown.exit_code == 0 and "chat_samples.jsonl" in shown.output
    history = History(history_file())
    back = as_report(history.get(runs[0]["id"]), history.scores(runs[0]["id"]))
    assert [(s.id, s.turn.conversation, s.turn.turn, s.turn.turns) for s in back.samples][:2] == [
        ("plans#1", "plans", 1, 2), ("plans#2", "plans", 2, 2)]
    page = tmp_path / "view.html"
    viewed = cli("view", "--out", page, "--compare", str(runs[1]["id"]), str(runs[0]["id"]))
    assert viewed.exit_code == 0, viewed.output
    html = page.read_text(encoding="utf-8")
    assert f"run {runs[1]['id']} · " in html and f"run {runs[0]['id']} · " in html  # side by side


PLUGIN_TEST = f"""
import pytest
from localragas import assert_gate

def test_chats(evaluate):
    report = evaluate({str(CHATS)!r}, metrics=["faithfulness", "context_precision"])
    assert [s.id for s in report.samples][:2] == ["plans#1", "plans#2"]
    assert report.meta["ci"]["resampled"] == "conversations"
    assert [c.conversation for c in report.conversations()][0] == "plans"
    assert_gate(report)
"""


def test_the_pytest_plugins_evaluate_takes_conversations(pytester):
    pytester.makepyfile(test_chats=PLUGIN_TEST)
    r = pytester.runpytest("-p", "no:cacheprovider", "--localragas-judge", "fake", "--localragas-embedder", "fake",
                           "--localragas-no-cache")
    r.assert_outcomes(passed=1)
