"""`localragas run-rag`: a Python function or a loopback HTTP stub asked every question; timeouts, 5xx (retried),
4xx (not retried) and malformed replies recorded per row without losing the others; eval refuses a failed row; and
generate -> run-rag -> eval end to end with the toy RAG of examples/."""
from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from localragas.core.errors import ConfigError
from localragas.testset.rag_run import RagRunSpec, run_rag

from cli_helpers import cli, write_jsonl

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def testset(tmp_path) -> Path:
    rows = [{"id": f"r{i}", "question": q, "answer": "", "contexts": [], "reference": "x", "meta": {"kind": "single"}}
            for i, q in enumerate(["ok", "slow", "flaky", "missing", "garbled", "shape"])]
    return write_jsonl(tmp_path / "testset.jsonl", rows)


class Stub(BaseHTTPRequestHandler):
    """Replies by the question: ok, slow (past the timeout), flaky (a 500, then ok), missing (404), garbled (not
    JSON), shape (JSON without contexts)."""

    calls: dict[str, int] = {}

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        q = body["question"]
        Stub.calls[q] = Stub.calls.get(q, 0) + 1
        if q == "slow":
            time.sleep(1.0)
        if q == "flaky" and Stub.calls[q] == 1:
            return self._send(500, b'{"error": "busy"}')
        if q == "missing":
            return self._send(404, b"{}")
        if q == "garbled":
            return self._send(200, b"<html>oops</html>")
        if q == "shape":
            return self._send(200, json.dumps({"answer": "a"}).encode())
        self._send(200, json.dumps({"answer": f"answer to {q} ({body['id']})", "contexts": ["c1"],
                                    "retrieved_context_ids": ["d#1"]}).encode())

    def _send(self, code: int, data: bytes):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except BrokenPipeError:
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Stub.calls = {}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/query"
    httpd.shutdown()
    httpd.server_close()


def test_http_failures_are_recorded_per_row_and_the_other_rows_kept(testset, server):
    run = run_rag(RagRunSpec(testset, url=server, timeout=0.4, retries=1, backoff=0.01, concurrency=3))
    rows = {r["id"]: r for r in run.rows}
    assert [r["id"] for r in run.rows] == [f"r{i}" for i in range(6)]  # input order
    assert rows["r0"]["answer"] == "answer to ok (r0)" and rows["r0"]["retrieved_context_ids"] == ["d#1"]
    assert rows["r0"]["meta"] == {"kind": "single"} and "rag_error" not in rows["r0"]
    assert rows["r2"]["answer"] == "answer to flaky (r2)"  # a 500, retried, then answered
    errors = {i: rows[i].get("rag_error") for i in rows}
    assert errors["r1"] == "timed out after 0.4 s (after 2 tries)"
    assert errors["r3"] == "HTTP 404 Not Found"
    assert errors["r4"].startswith("malformed reply: not JSON")
    assert errors["r5"] == "malformed reply: 'contexts' must be a list of strings"
    assert all(rows[i]["answer"] == "" and rows[i]["contexts"] == [] for i in ("r1", "r3", "r4", "r5"))
    assert Stub.calls == {"ok": 1, "slow": 2, "flaky": 2, "missing": 1, "garbled": 1, "shape": 1}  # 4xx: no retry
    assert [i for i, _ in run.failed] == ["r1", "r3", "r4", "r5"]


def test_a_python_function_is_called_with_each_question(testset):
    asked = []

    def pipeline(question):
        asked.append(question)
        if question == "slow":
            time.sleep(1.0)
        if question == "missing":
            raise KeyError("no such document")
        if question == "shape":
            return {"answer": 3, "contexts": []}
        return (f"answer to {question}", ["ctx"])  # a 2-tuple is accepted too

    run = run_rag(RagRunSpec(testset, target=pipeline, timeout=0.3, retries=0))
    rows = {r["id"]: r for r in run.rows}
    assert rows["r0"]["answer"] == "answer to ok" and rows["r0"]["contexts"] == ["ctx"]
    assert "retrieved_context_ids" not in rows["r0"]
    assert rows["r1"]["rag_error"] == ("timed out after 0.3 s; the call could not be stopped (a function not "
                                       "importable by name runs in a thread)")  # a closure: no worker can import it
    assert rows["r3"]["rag_error"] == "KeyError: 'no such document'"
    assert rows["r5"]["rag_error"] == "malformed reply: 'answer' must be a string, got int"
    assert sorted(asked) == sorted(["ok", "slow", "flaky", "missing", "garbled", "shape"])


def test_targets_are_found_by_module_or_by_file(tmp_path, testset, monkeypatch):
    (tmp_path / "mypipe.py").write_text("def ask(q):\n    return {'answer': q.upper(), 'contexts': []}\n")
    monkeypatch.chdir(tmp_path)
    for target in ("mypipe:ask", str(tmp_path / "mypipe.py") + ":ask"):
        assert run_rag(RagRunSpec(testset, target=target)).rows[0]["answer"] == "OK"
    for target, message in [("mypipe", "must look like module:function"), ("nomodule:ask", "cannot import module"),
                            ("mypipe:other", "has no function 'other'"), ("gone.py:ask", "is not a file")]:
        with pytest.raises(ConfigError, match=message):
            run_rag(RagRunSpec(testset, target=target))
    with pytest.raises(ConfigError, match="give one of --target"):
        RagRunSpec(testset)


def test_cli_exit_code_counts_failed_rows_and_eval_refuses_them(testset, server, tmp_path):
    out = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--url", server, "--out", out, "--timeout", 0.4, "--retries", 0, "--no-progress")
    assert r.exit_code == 4, r.output
    assert "1 of 6 rows answered" in r.output and "5 of 6 rows failed" in r.output
    assert "r3: HTTP 404 Not Found" in r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6 and sum("rag_error" in row for row in rows) == 5  # flaky: a 500 with no retry left
    r = cli("eval", out, "--judge", "fake", "--embedder", "fake", "--no-progress")
    assert r.exit_code == 2 and "field 'rag_error': the RAG pipeline failed on this row" in r.output
    r = cli("eval", out, "--judge", "fake", "--embedder", "fake", "--no-progress", "--skip-invalid", "--no-gate",
            "--out", tmp_path / "report.json")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["samples"]) == 1 and len(report["skipped"]) == 5
    assert all(s["field"] == "rag_error" for s in report["skipped"])


def test_generate_run_rag_eval_end_to_end_with_the_toy_rag(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    testset, filled = tmp_path / "testset.jsonl", tmp_path / "filled.jsonl"
    r = cli("generate", "examples/docs", "--out", testset, "--size", 8, "--judge", "fake", "--embedder", "fake",
            "--no-progress")
    assert r.exit_code == 0, r.output
    r = cli("run-rag", testset, "--target", "examples.toy_rag:answer", "--out", filled, "--concurrency", 2,
            "--no-progress")
    assert r.exit_code == 0 and "8 of 8 rows answered" in r.output, r.output
    rows = [json.loads(line) for line in filled.read_text().splitlines()]
    assert all(row["answer"] and len(row["contexts"]) == 2 and row["retrieved_context_ids"] for row in rows)
    r = cli("eval", filled, "--judge", "fake", "--embedder", "fake", "--no-progress", "-m",
            "faithfulness,context_recall,id_based_context_recall", "--out", tmp_path / "report.json")
    assert r.exit_code in (0, 1), r.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["samples"]) == 8 and report["meta"]["judge_stats"]["failed_calls"] == 0
    recall = [s["metrics"]["id_based_context_recall"] for s in report["samples"]]
    assert any(m["value"] is not None for m in recall)  # generated reference_context_ids meet the toy RAG's ids


# --- a call past its timeout is stopped; an HTTP reply trickled past it is cut -----------------------------------

PIPELINE = """
import os, time
from pathlib import Path

def ask(question):
    if question == "slow":
        time.sleep(2.0)
        Path(os.environ["RAG_MARKER"]).write_text("the call went on after its timeout")
    if question == "boom":
        raise ConnectionError("index offline")
    if question == "exit":
        os._exit(3)
    return {"answer": f"{question} from {os.getpid()}", "contexts": ["c"]}
"""


def test_a_call_past_its_timeout_is_stopped_and_the_other_rows_are_answered(tmp_path, monkeypatch):
    (tmp_path / "slowpipe.py").write_text(PIPELINE)
    marker = tmp_path / "marker"
    monkeypatch.setenv("RAG_MARKER", str(marker))
    monkeypatch.chdir(tmp_path)
    questions = ["a", "slow", "b", "boom", "exit", "c"]
    data = write_jsonl(tmp_path / "t.jsonl", [{"id": f"r{i}", "question": q} for i, q in enumerate(questions)])
    out = tmp_path / "filled.jsonl"
    t0 = time.monotonic()
    r = cli("run-rag", data, "--target", "slowpipe:ask", "--out", out, "--timeout", 0.5, "--retries", 0,
            "--no-progress")
    took = time.monotonic() - t0
    assert r.exit_code == 4, r.output
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert rows["r1"]["rag_error"] == "timed out after 0.5 s; the call was stopped"
    assert rows["r3"]["rag_error"] == "ConnectionError: index offline"
    assert rows["r4"]["rag_error"] == "the pipeline's process ended during the call (exit code 3)"
    pids = {i: rows[i]["answer"].split(" from ")[1] for i in ("r0", "r2", "r5")}
    assert pids["r0"] != pids["r2"]  # the worker of the stopped call was replaced
    assert pids["r2"] != pids["r5"]  # and so was the one that died
    assert int(pids["r0"]) != os.getpid()
    assert took < 10, took
    time.sleep(2.5)  # past the slow call's sleep: had it gone on, the marker would be there
    assert not marker.exists()


def test_one_worker_answers_every_call_when_none_times_out(tmp_path, monkeypatch):
    (tmp_path / "slowpipe.py").write_text(PIPELINE)
    data = write_jsonl(tmp_path / "t.jsonl", [{"id": f"r{i}", "question": f"q{i}"} for i in range(20)])
    run = run_rag(RagRunSpec(data, target=f"{tmp_path / 'slowpipe.py'}:ask", timeout=5))
    assert not run.failed and len({row["answer"].split(" from ")[1] for row in run.rows}) == 1


class Trickle(BaseHTTPRequestHandler):
    """A reply of 1,000 bytes announced, sent one byte every 0.1 s: no single read waits long, the whole never ends."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        try:
            for _ in range(1000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_an_endpoint_that_trickles_its_reply_is_cut_at_the_timeout(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    data = write_jsonl(tmp_path / "t.jsonl", [{"id": "r0", "question": "q"}])
    out = tmp_path / "filled.jsonl"
    try:
        t0 = time.monotonic()
        r = cli("run-rag", data, "--url", f"http://127.0.0.1:{httpd.server_address[1]}/q", "--out", out,
                "--timeout", 0.5, "--retries", 1, "--no-progress")
        took = time.monotonic() - t0
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.exit_code == 4, r.output
    assert json.loads(out.read_text())["rag_error"] == "timed out after 0.5 s (after 2 tries)"
    assert took < 3, took  # two tries of 0.5 s and a backoff, not 100 s of trickle
