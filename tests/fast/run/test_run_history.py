"""The run history (localragas/run/history.py): every eval and evaluate() recorded in .localragas/history.sqlite,
listed, shown and removed by `localragas runs`; off with --no-history / history=False; written safely by two processes;
a corrupt or unwritable history warns once and never changes a run's result."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import localragas
from localragas.core import paths
from localragas.core.errors import HistoryError
from localragas.quality.compare import compare_reports
from localragas.run.history import SCHEMA_VERSION, History, RunRecord
from localragas.run.history_record import as_report, record_run

from cli_helpers import cli, sample_rows, write_jsonl

FAKE = ("--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress")
ROOT = Path(__file__).resolve().parents[3]


def _eval(data, *more, **env):
    return cli("eval", data, *FAKE, "--metrics", "faithfulness,context_recall", *more, **env)


@pytest.fixture
def data(tmp_path):
    return write_jsonl(tmp_path / "data.jsonl", sample_rows(3))


def test_an_eval_is_recorded_with_what_it_measured_and_how(data, tmp_path):
    out = tmp_path / "r.json"
    r = _eval(data, "--out", out, "--tag", "nightly,ci", "--name", "baseline", "-t", "faithfulness=0.7")
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert report["meta"]["run"] == {"name": "baseline", "tags": ["nightly", "ci"]}
    with History() as h:
        [run] = h.runs()
        scores = h.scores(run.id)
    assert (run.name, run.tags, run.dataset, run.rows, run.verdict) == ("baseline", ["nightly", "ci"], str(data), 3,
                                                                        "passed")
    assert run.dataset_sha256 == report["meta"]["dataset_sha256"]
    assert run.judge == {"name": "fake", "fingerprint": "fake:fake"} and run.version == localragas.__version__
    assert run.metric_options == report["meta"]["metric_options"] and run.outputs == {"json": str(out.resolve())}
    faith = run.metric("faithfulness")
    summary = next(s for s in report["summary"] if s["metric"] == "faithfulness")
    assert (faith.mean, faith.ci_low, faith.ci_high, faith.threshold, faith.status) == (
        summary["mean"], summary["ci_low"], summary["ci_high"], 0.7, "passed")
    assert scores["ids"] == ["s0", "s1", "s2"]
    assert scores["metrics"]["faithfulness"] == [round(s["metrics"]["faithfulness"]["value"], 6)
                                                 for s in report["samples"]]
    assert len(run.prompts["digest"]) == 16 and set(run.prompts["sha256"]) == set(report["meta"]["prompts"]["sha256"])


def test_runs_lists_newest_first_filters_shows_and_removes(data):
    for args in (("--name", "a"), ("--tag", "x"), ("--tag", "x", "--name", "b")):
        assert _eval(data, *args).exit_code == 0
    listed = cli("runs")
    assert [line.split()[0] for line in listed.output.splitlines()[1:]] == ["3", "2", "1"]
    assert [json.loads(line)["name"] for line in cli("runs", "--tag", "x", "--json").output.splitlines()] == ["b", None]
    assert [json.loads(line)["id"] for line in cli("runs", "--name", "a", "--json").output.splitlines()] == [1]
    assert len(cli("runs", "--dataset", "data.jsonl", "--json").output.splitlines()) == 3
    assert cli("runs", "--dataset", "other.jsonl").output.startswith("no run recorded")
    assert "(2 of 3 runs; --all or --limit N for more)" in cli("runs", "-n", "2").output
    shown = cli("runs", "show", "2")
    assert shown.exit_code == 0 and "tags            x" in shown.output and "faithfulness " in shown.output
    assert json.loads(cli("runs", "show", "2", "--json").output)["scores"]["ids"] == ["s0", "s1", "s2"]
    assert cli("runs", "rm", "2").output == "removed run 2\n"
    assert [json.loads(line)["id"] for line in cli("runs", "--json").output.splitlines()] == [3, 1]
    gone = cli("runs", "show", "2")
    assert gone.exit_code == 2 and "no run 2 in the run history" in gone.output
    assert _eval(data).exit_code == 0 and History().runs(limit=1)[0].id == 4  # an id is never reused


def _stored(judge: str, ids: tuple[str, ...] = ("s0", "s1")) -> int:
    """A run added to the history as evaluate() would: its method (the judge) and its sample ids shared."""
    record = RunRecord(started="2026-01-01T00:00:00", verdict="passed", judge={"name": judge},
                       ids_sha256=hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16])
    with History() as h:
        return h.add(record, {"ids": list(ids), "metrics": {"faithfulness": [1.0] * len(ids)}})


def test_reset_asks_on_a_terminal_and_refuses_without_yes_elsewhere(monkeypatch):
    _stored("a"), _stored("b")
    path = paths.history_file()
    refused = cli("runs", "--reset")  # CliRunner's stdin is not a terminal
    assert refused.exit_code == 2 and "--yes" in refused.output and "would delete 2 runs in" in refused.output
    assert History().count() == 2
    monkeypatch.setattr("localragas.cli.history._stdin_is_terminal", lambda: True)
    declined = cli("runs", "--reset", input="n\n")
    assert declined.exit_code == 0 and declined.output == f"delete 2 runs in {path}? [y/N]: n\nnothing deleted\n"
    assert History().count() == 2
    accepted = cli("runs", "--reset", input="y\n")
    assert accepted.exit_code == 0 and f"[y/N]: y\nremoved {path}" in accepted.output and not path.exists()
    _stored("a")
    monkeypatch.setattr("localragas.cli.history._stdin_is_terminal", lambda: False)
    assert cli("runs", "--reset", "--yes").output.startswith(f"removed {path}") and not path.exists()


def _shared_rows() -> dict[str, set[str]]:
    """Each run's shared rows (its method's and its sample ids' sha), and "all": the shared table's."""
    db = sqlite3.connect(paths.history_file())
    out = {str(run): {json.loads(record)["method"], json.loads(zlib.decompress(body))["samples"]}
           for run, record, body in db.execute("SELECT id, record, body FROM runs JOIN scores ON run = id")}
    out["all"] = {sha for (sha,) in db.execute("SELECT sha FROM shared")}
    db.close()
    return out


def test_rm_deletes_the_shared_rows_no_run_left_refers_to():
    a1, a2, own, same_ids = _stored("a"), _stored("a"), _stored("b", ("x0",)), _stored("c")
    before = _shared_rows()
    assert before[str(a1)] == before[str(a2)] and len(before["all"]) == 5  # methods a, b, c; ids s0,s1 and x0
    kept = {run: (History().get(run), History().scores(run)) for run in (a1, a2, same_ids)}
    assert cli("runs", "rm", own).output == f"removed run {own}\n"
    after = _shared_rows()
    assert after["all"] == before["all"] - before[str(own)] and len(after["all"]) == 3
    with History() as h:
        h.remove(same_ids)  # its method goes; its sample ids, which a1 and a2 share, stay
        assert {run: (h.get(run), h.scores(run)) for run in (a1, a2)} == {run: kept[run] for run in (a1, a2)}
    assert _shared_rows()["all"] == before[str(a1)]
    assert cli("runs", "rm", a1, a2).exit_code == 0
    assert _shared_rows() == {"all": set()} and History().count() == 0


def test_no_history_and_history_false_record_nothing(data):
    assert _eval(data, "--no-history").exit_code == 0
    localragas.evaluate(sample_rows(2), judge="fake", embedder="fake", cache=False, progress=False, history=False)
    assert not paths.history_file().exists()
    report = localragas.evaluate(sample_rows(2), judge="fake", embedder="fake", cache=False, progress=False,
                                 metrics=["faithfulness"], tags=["py"])
    [run] = History().runs()
    assert (run.dataset, run.tags, run.rows) == (None, ["py"], 2) and len(run.dataset_sha256) == 64
    assert report.meta["run"] == {"tags": ["py"]}


def test_the_settings_file_turns_the_history_off(data, tmp_path):
    (tmp_path / "localragas.toml").write_text("history = false\n")
    assert _eval(data, "--config", tmp_path / "localragas.toml").exit_code == 0
    assert not paths.history_file().exists()


def test_calibrate_records_no_run():
    rows = [{**sample_rows(1)[0], "label": {"metric": "faithfulness", "kind": "binary", "value": 1}}]
    localragas.calibrate(rows, "fake", "fake", cache=False, progress=False, resume=False)
    assert not paths.history_file().exists()


@pytest.mark.parametrize("damage", ["corrupt", "unwritable"])
def test_a_broken_history_warns_once_and_the_eval_goes_on_with_its_exit_code(data, tmp_path, damage):
    rows = sample_rows(3)
    rows[0]["answer"] = "The moon is made of cheese."
    data = write_jsonl(tmp_path / "failing.jsonl", rows)
    failing = ("-t", "faithfulness=0.99")  # the gate fails: exit 1 with or without a history
    expected = _eval(data, "--no-history", *failing).exit_code
    path = paths.history_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    if damage == "corrupt":
        path.write_bytes(b"this is not a database" * 100)
    else:
        path.mkdir()  # a folder where the file goes: cannot be opened
    r = _eval(data, *failing)
    assert r.exit_code == expected == 1
    warning = [line for line in r.stderr.splitlines() if "run history" in line]
    assert len(warning) == 1 and str(path) in warning[0] and "localragas runs --reset" in warning[0]
    assert "results and exit code are unchanged" in warning[0]
    if damage == "corrupt":
        listed = cli("runs")
        assert listed.exit_code == 2 and "localragas runs --reset" in listed.output
        assert cli("runs", "--reset", "--yes").output == f"removed {path}\n"
        assert _eval(data, *failing).exit_code == 1 and len(History().runs()) == 1


def test_the_warning_is_given_once_per_process(tmp_path, capsys):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"garbage" * 1000)
    report = localragas.evaluate(sample_rows(1), judge="fake", embedder="fake", cache=False, progress=False,
                                 metrics=["faithfulness"], history=False)
    assert record_run(report, path=path) is None and record_run(report, path=path) is None
    assert capsys.readouterr().err.count("not recorded in the run history") == 1


BUSY = "another process holds it"


@pytest.fixture
def held(monkeypatch):
    """A history of one run that another connection holds (its write transaction left open); a 0.2 s busy timeout."""
    monkeypatch.setattr("localragas.run.history.BUSY_TIMEOUT_MS", 200)
    localragas.evaluate(sample_rows(1), judge="fake", embedder="fake", cache=False, progress=False,
                        metrics=["faithfulness"])
    other = sqlite3.connect(paths.history_file(), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    yield other
    if other.in_transaction:
        other.execute("ROLLBACK")
    other.close()


def test_a_held_history_says_another_process_holds_it_and_never_advises_deleting_it(held, data):
    removed = cli("runs", "rm", "1")
    assert removed.exit_code == 2
    assert removed.output == (f"Error: run history {paths.history_file()}: another process holds it (a run recording "
                              "its result, `localragas runs rm`, a program with the file open) and kept it past 0.2 "
                              "s: wait for it to finish, or close it, and try again; nothing is wrong with the file\n")
    r = _eval(data)  # a run while it is held: not recorded, said why; its exit code as without a history
    assert r.exit_code == 0
    [warning] = [line for line in r.stderr.splitlines() if "run history" in line]
    assert BUSY in warning and "--reset" not in warning and "results and exit code are unchanged" in warning
    held.execute("ROLLBACK")  # held now for reading too: exclusive locking
    held.execute("PRAGMA locking_mode = EXCLUSIVE")
    held.execute("BEGIN EXCLUSIVE")
    for command in (("runs",), ("runs", "show", "1"), ("view",)):
        r = cli(*command)
        assert r.exit_code == 2 and BUSY in r.output and "--reset" not in r.output, command
    held.execute("ROLLBACK")
    held.execute("PRAGMA locking_mode = NORMAL")
    held.execute("SELECT 1 FROM runs").fetchall()  # the lock is let go at the next access in normal mode
    assert cli("runs", "rm", "1").output == "removed run 1\n"  # nothing was wrong with the file


def test_a_history_of_a_newer_schema_is_refused_by_name(tmp_path):
    path = tmp_path / "h.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(HistoryError, match=r"written by a newer localragas \(schema 2, this one reads 1\)"):
        History(path).runs()


def test_the_file_is_in_wal_mode_with_a_busy_timeout(data):
    assert _eval(data).exit_code == 0
    db = sqlite3.connect(paths.history_file())
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_two_processes_write_safely(tmp_path):
    code = ("import sys, localragas\nfrom localragas.run.history_record import record_run\n"
            "r = localragas.evaluate([{'id': 'a', 'question': 'q?', 'answer': 'A.', 'contexts': ['A.']}], "
            "judge='fake', embedder='fake', cache=False, progress=False, metrics=['faithfulness'], history=False)\n"
            "ids = [record_run(r, path=sys.argv[1]) for _ in range(15)]\nassert None not in ids, ids\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    path = tmp_path / "h.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], env=env, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read().decode()
        p.stderr.close()
    with History(path) as h:
        assert h.count() == 30 and sorted(r.id for r in h.runs()) == list(range(1, 31))


def test_two_stored_runs_compare_sample_by_sample_as_their_reports_do(data):
    rows = sample_rows(6)
    rows[2]["answer"] = "Item 2 is blue. The moon is cheese."
    base = localragas.evaluate(sample_rows(6), judge="fake", embedder="fake", cache=False, progress=False)
    new = localragas.evaluate(rows, judge="fake", embedder="fake", cache=False, progress=False)
    with History() as h:
        stored = [as_report(r, h.scores(r.id)) for r in reversed(h.runs())]
    want, got = compare_reports(base, new), compare_reports(*stored)
    assert [m.model_dump() for m in got.metrics] == [m.model_dump() for m in want.metrics]
    assert got.largest_changes == want.largest_changes and got.warnings == want.warnings
    assert got.largest_changes["faithfulness"][0].id == "s2"
