"""One bad reply is that row's failure, never the run's: a reply nested 200,000 deep, a lone surrogate, invalid UTF-8,
JSON that is not an object or a reply past the size limit each fail their own row with a reason; the other rows are
answered and every row is written (exit 4). A crash message names a resume checkpoint only when one holds finished
work: run-rag keeps none."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import localragas.cli.eval as eval_cli
import localragas.testset.rag_targets as rag_targets
from localragas.cli.options import EXIT_INTERNAL_ERROR, EXIT_NOT_EVALUATED
from localragas.testset.rag_run import RagRunSpec, run_rag

from cli_helpers import cli, write_jsonl

DEEP = b"[" * 200_000 + b"]" * 200_000
BAD = {  # question -> the body the endpoint replies with
    "deep": DEEP,
    "surrogate": b'{"answer": "half a pair \\ud800", "contexts": ["c"]}',
    "bytes": b'{"answer": "\xff\xfe", "contexts": ["c"]}',
    "list": b'[1, 2, 3]',
    "huge": b'{"answer": "' + b"x" * 600_000 + b'", "contexts": ["c"]}',
}
WHY = {
    "deep": "malformed reply: JSON nested too deep to read",
    "surrogate": "malformed reply: 'answer': invalid Unicode: lone surrogate \\ud800 at character 12",
    "bytes": "malformed reply: not JSON",
    "list": "malformed reply: expected an object with answer and contexts, got list",
    "huge": "malformed reply: longer than 500000 bytes",
}


class Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):
        q = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["question"]
        data = BAD.get(q) or json.dumps({"answer": f"answer to {q}", "contexts": ["c1"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def url():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/rag"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("bad", list(BAD))
def test_one_bad_reply_fails_its_row_and_the_five_finished_rows_are_written(tmp_path, url, bad, monkeypatch):
    monkeypatch.setattr(rag_targets, "MAX_REPLY_BYTES", 500_000)  # above DEEP's 400,000 bytes
    questions = ["one", "two", bad, "three", "four", "five"]
    testset = write_jsonl(tmp_path / "testset.jsonl", [{"id": f"r{i}", "question": q} for i, q in enumerate(questions)])
    out = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--url", url, "--out", out, "--no-progress", "--concurrency", "2")
    assert r.exit_code == EXIT_NOT_EVALUATED == 4, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output and "checkpoint" not in r.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == [f"r{i}" for i in range(6)]
    assert [row["answer"] for row in rows if "rag_error" not in row] == [
        f"answer to {q}" for q in questions if q != bad]
    assert rows[2]["answer"] == "" and rows[2]["rag_error"].startswith(WHY[bad]), rows[2]
    assert f"r2: {WHY[bad]}" in r.output and "1 of 6 rows failed" in r.output


def test_a_python_reply_that_breaks_while_checked_fails_its_row_only(tmp_path):
    """A reply object whose own methods raise (here a str subclass) is the row's failure, not a crash of the run."""
    class Cursed(str):
        def encode(self, *args, **kwargs):
            raise RuntimeError("cursed text")

    def pipeline(question):
        return {"answer": Cursed("boo") if question == "bad" else f"answer to {question}", "contexts": ["c"]}

    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "question": "ok"}, {"id": "b", "question": "bad"}])
    run = run_rag(RagRunSpec(testset, target=pipeline))
    assert [row["answer"] for row in run.rows] == ["answer to ok", ""]
    assert run.failed == [("b", "could not handle the pipeline's reply: RuntimeError: cursed text")]


def test_a_test_set_row_with_a_lone_surrogate_is_still_written(tmp_path, url):
    """A field of the test set holding JSON's "\\udc80" cannot be written as UTF-8: the row is written escaped as it
    came, and the other rows with it, instead of the run losing them all at the end."""
    testset = tmp_path / "t.jsonl"
    testset.write_text('{"id": "a", "question": "one", "note": "x\\udc80"}\n{"id": "b", "question": "two"}\n')
    out = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--url", url, "--out", out, "--no-progress")
    assert r.exit_code == 0, r.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert '"note": "x\\udc80"' in lines[0] and [json.loads(line)["answer"] for line in lines] == [
        "answer to one", "answer to two"]


def test_a_crash_names_the_resume_checkpoint_only_when_it_holds_finished_work(data, monkeypatch):
    """eval crashing while it writes its reports: its checkpoint holds every finished sample, and the message says
    where; with --no-resume there is none, and the message claims none."""
    def boom(*args, **kwargs):
        raise RuntimeError("writer broke")

    monkeypatch.setattr(eval_cli, "write_and_print", boom)
    fast = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache"]
    r = cli("eval", data, *fast)
    assert r.exit_code == EXIT_INTERNAL_ERROR, r.output
    said = " ".join(r.output.split())
    assert "internal error RuntimeError: writer broke (a bug in localragas; the traceback is above; what was " \
           "finished is kept in the resume checkpoint " in said and "the same command goes on from there)" in said
    r = cli("eval", data, *fast, "--no-resume")
    assert r.exit_code == EXIT_INTERNAL_ERROR, r.output
    assert "checkpoint" not in r.output.split("Error: internal error")[1]


def test_a_run_rag_crash_claims_no_resume_checkpoint(tmp_path, monkeypatch):
    import localragas.testset.rag_run as rag_run

    def boom(spec):
        raise RuntimeError("broke")

    monkeypatch.setattr(rag_run, "run_rag", boom)
    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "question": "q"}])
    r = cli("run-rag", testset, "--url", "http://127.0.0.1:9/", "--out", tmp_path / "o.jsonl", "--no-progress")
    assert r.exit_code == EXIT_INTERNAL_ERROR and "internal error RuntimeError: broke" in r.output
    assert "checkpoint" not in r.output.split("Error: internal error")[1]
