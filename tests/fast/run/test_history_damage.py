"""A damaged row of the run history (localragas/run/history.py) is one run's trouble: `runs` and `view` leave it out
with a warning line and show the others, `runs show` of it exits 2 naming the history file and the run, `runs rm`
forgets it; an id past SQLite's integers is no run (exit 2), never an OverflowError (exit 3)."""
from __future__ import annotations

import json
import sqlite3
import zlib

import pytest

from localragas.core import paths
from localragas.run.history import History, RunRecord

from cli_helpers import cli

HUGE = "99999999999999999999999"


def _stored(n: int) -> list[int]:
    """n runs of one dataset added as evaluate() would, oldest first."""
    with History() as h:
        return [h.add(RunRecord(started=f"2026-01-0{i + 1}T00:00:00", verdict="passed", dataset="data.jsonl",
                                judge={"name": "fake"}, prompts={"digest": "p"}, rows=2),
                      {"ids": ["s0", "s1"], "metrics": {"faithfulness": [1.0, 0.5 + i / 10]}}) for i in range(n)]


def _damage(sql: str, *args: object) -> None:
    db = sqlite3.connect(paths.history_file())
    db.execute(sql, args)
    db.commit()
    db.close()


def _listed(r) -> list[int]:
    return [json.loads(line)["id"] for line in r.stdout.splitlines()]


RECORDS = {"bad JSON": "{not json", "not an object": "[1, 2]", "no method": '{"rows": 2}',
           "a missing shared row": '{"method": "0123456789abcdef0123456789abcdef"}'}


@pytest.mark.parametrize("record", list(RECORDS.values()), ids=list(RECORDS))
def test_a_run_whose_record_is_damaged_is_left_out_named_and_can_be_removed(record, tmp_path):
    one, two, three = _stored(3)
    _damage("UPDATE runs SET record = ? WHERE id = ?", record, two)
    damaged = f"run history {paths.history_file()}: run {two} is damaged (its record: "
    forget = f"; `localragas runs rm {two}` forgets it"

    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    assert _listed(listed) == [three, one]
    assert listed.stderr.startswith(f"warning: left out: {damaged}") and forget in listed.stderr
    table = cli("runs")
    assert table.exit_code == 0 and [line.split()[0] for line in table.stdout.splitlines()[1:]] == [str(three),
                                                                                                     str(one)]
    shown = cli("runs", "show", two)
    assert shown.exit_code == 2 and f"Error: {damaged}" in shown.output and forget in shown.output
    assert "Traceback" not in shown.output
    assert cli("runs", "show", one).exit_code == 0 and cli("runs", "show", three, "--json").exit_code == 0

    page = tmp_path / "view.html"
    view = cli("view", "--out", page)
    assert view.exit_code == 0, view.output
    assert f"warning: left out: {damaged}" in view.stderr
    html = page.read_text()
    assert f"run {one} → run {three}" in html and "is damaged" in html  # the others compared; the page says it too

    removed = cli("runs", "rm", two)
    assert removed.exit_code == 0 and removed.stdout == f"removed run {two}\n"
    after = cli("runs", "--json")
    assert _listed(after) == [three, one] and after.stderr == ""
    assert History().scores(one)["metrics"]["faithfulness"] == [1.0, 0.5]  # what it shares with the others is kept


@pytest.mark.parametrize("body", [b"\x00not zlib", zlib.compress(b"{not json"), zlib.compress(b"[]")],
                         ids=["bad compressed body", "bad JSON", "not an object"])
def test_a_run_whose_scores_are_damaged_is_listed_shown_and_left_out_of_comparisons(body, tmp_path):
    one, two = _stored(2)
    _damage("UPDATE scores SET body = ? WHERE run = ?", body, two)
    damaged = f"run history {paths.history_file()}: run {two} is damaged (its per-sample scores: "

    listed = cli("runs", "--json")
    assert _listed(listed) == [two, one] and listed.stderr == ""  # listing never reads the scores
    assert cli("runs", "show", two).exit_code == 0
    shown = cli("runs", "show", two, "--json")
    assert shown.exit_code == 2 and f"Error: {damaged}" in shown.output and "Traceback" not in shown.output

    page = tmp_path / "view.html"
    view = cli("view", "--out", page)
    assert view.exit_code == 0, view.output
    assert f"warning: left out: {damaged}" in view.stderr and page.is_file()
    assert f"run {one} → run {two}" not in page.read_text()

    assert cli("runs", "rm", two).exit_code == 0
    assert _listed(cli("runs", "--json")) == [one] and History().scores(one)["ids"] == ["s0", "s1"]


def test_removing_a_run_is_not_stopped_by_another_runs_damage():
    one, two, three = _stored(3)
    _damage("UPDATE runs SET record = '{bad' WHERE id = ?", one)
    _damage("UPDATE scores SET body = x'00' WHERE run = ?", two)
    r = cli("runs", "rm", three)
    assert r.exit_code == 0 and r.stdout == f"removed run {three}\n"
    assert History().count() == 2


@pytest.mark.parametrize("command", [("runs", "show", HUGE), ("runs", "show", HUGE, "--json"), ("runs", "rm", HUGE),
                                     ("runs", "show", "0")])
def test_a_run_id_past_sqlites_integers_is_no_run(command):
    _stored(1)
    r = cli(*command)
    assert r.exit_code == 2, r.output
    assert f"Error: no run {command[2]} in the run history {paths.history_file()}" in r.output
    assert "Traceback" not in r.output and "OverflowError" not in r.output
