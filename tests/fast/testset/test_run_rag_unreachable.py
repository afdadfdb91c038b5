"""run-rag stops when its pipeline cannot be reached: after `max_connection_failures` (default 5) rows in a row
failed to connect (after their retries) no further question is asked, the rows done so far are kept and written,
and the CLI says so and exits 6. Other failures, and a row answered in between, do not count towards it."""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from localragas.testset.rag_run import DEFAULT_MAX_CONNECTION_FAILURES, RagRunSpec, run_rag

from cli_helpers import cli, write_jsonl


@pytest.fixture
def testset(tmp_path) -> Path:
    rows = [{"id": f"r{i}", "question": f"q{i}"} for i in range(12)]
    return write_jsonl(tmp_path / "testset.jsonl", rows)


@pytest.fixture
def closed_url() -> str:
    """A local port nothing listens on: every connection is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/query"


def test_an_endpoint_that_refuses_every_connection_stops_the_run_after_5_rows(testset, closed_url):
    run = run_rag(RagRunSpec(testset, url=closed_url, retries=0))
    assert DEFAULT_MAX_CONNECTION_FAILURES == 5
    assert [r["id"] for r in run.rows] == ["r0", "r1", "r2", "r3", "r4"] and run.not_asked == 7
    assert all(r["rag_error"].startswith("cannot connect:") for r in run.rows)
    assert run.stopped.startswith("stopped after 5 rows in a row could not reach the pipeline (last: cannot connect:")


def test_the_rows_answered_before_the_pipeline_went_down_are_kept(testset):
    asked = []

    def pipeline(question):
        asked.append(question)
        if question in ("q0", "q1", "q3"):
            return {"answer": f"a {question}", "contexts": ["c"]}
        if question == "q2":
            raise KeyError("not a connection failure")
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    run = run_rag(RagRunSpec(testset, target=pipeline, retries=0, max_connection_failures=3))
    assert asked == ["q0", "q1", "q2", "q3", "q4", "q5", "q6"]  # q2's KeyError and q3's answer broke no streak
    assert [r.get("answer") for r in run.rows[:4]] == ["a q0", "a q1", "", "a q3"]
    assert [i for i, _ in run.failed] == ["r2", "r4", "r5", "r6"] and run.not_asked == 5
    assert "(last: ConnectionRefusedError: [Errno 111] Connection refused)" in run.stopped


def test_zero_never_stops_and_a_streak_broken_by_an_answer_starts_again(testset, closed_url):
    run = run_rag(RagRunSpec(testset, url=closed_url, retries=0, max_connection_failures=0))
    assert len(run.rows) == 12 and run.stopped is None and run.not_asked == 0

    def every_third_answers(question):
        if int(question[1:]) % 3 == 0:
            return {"answer": "a", "contexts": []}
        raise ConnectionError("down")

    run = run_rag(RagRunSpec(testset, target=every_third_answers, retries=0, max_connection_failures=3))
    assert len(run.rows) == 12 and run.stopped is None


def test_the_cli_writes_the_rows_done_says_why_and_exits_6(testset, closed_url, tmp_path):
    out = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--url", closed_url, "--out", out, "--retries", 0, "--max-connection-failures", 2,
            "--no-progress")
    assert r.exit_code == 6, r.output
    assert "Error: run-rag stopped after 2 rows in a row could not reach the pipeline" in r.output
    assert "Wrote the 2 row(s) done so far (0 answered)" in r.output and "10 row(s) not asked" in r.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["r0", "r1"]
