"""`localragas review --serve` (localragas/report/review_server.py, review_page.py) with an HTTP client on 127.0.0.1:
three verdicts posted are three lines of the labels file, a reload resumes at the fourth, every answer carries the
page's Content-Security-Policy, and what does not come from the page itself (another Host, another origin, no token,
not JSON) is refused and writes nothing. The command itself in a subprocess: it serves until Ctrl-C, then says
where the review stands."""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from localragas.quality.review_session import ReviewSession, drawn
from localragas.report import read_json
from localragas.report.review_page import review_csp, review_page
from localragas.report.review_server import serve_review
from localragas.report.review_view import item_view

from cli_helpers import ctrl_c_as_in_a_terminal, reviewable_run

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return reviewable_run(tmp_path_factory.mktemp("run"))


def start(run: Path, labels: Path, reviewer: str = "alice"):
    session = ReviewSession.open(drawn(read_json(run), n=3), labels, reviewer)
    server = serve_review(session, lambda token: review_page(session, lambda s: item_view(s.item), token=token,
                                                             report=str(run)))
    return session, server


def request(server, method: str, path: str, body: dict | None = None, **headers: str):
    port = server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    base = {"Host": f"127.0.0.1:{port}"}
    if body is not None:
        base.update({"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"})
    base.update({k.replace("_", "-"): v for k, v in headers.items()})
    conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=base)
    got = conn.getresponse()
    return got.status, dict(got.getheaders()), got.read().decode("utf-8")


def page_data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))


@pytest.fixture
def served(made, tmp_path):
    labels = tmp_path / "run.labels.jsonl"
    session, server = start(made, labels)
    yield session, server, labels
    server.shutdown()
    server.server_close()


def test_three_verdicts_posted_are_three_lines_and_a_reload_resumes_at_the_fourth(served):
    session, server, labels = served
    status, headers, page = request(server, "GET", "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    data = page_data(page)
    assert data["total"] == session.total >= 4 and not any("label" in it for it in data["items"])
    for it, label in zip(data["items"][:3], (1, 0, None)):
        status, _, body = request(server, "POST", "/label",
                                  {"token": data["token"], "key": it["key"], "label": label, "note": "n" * (label or 0)})
        assert status == 200, body
    assert json.loads(body) == {"done": 3, "total": session.total}
    got = [json.loads(x) for x in labels.read_text(encoding="utf-8").splitlines()]
    assert [(x["key"], x["label"], x["reviewer"]) for x in got] == [
        (it["key"], v, "alice") for it, v in zip(data["items"][:3], (1, 0, None))]
    assert all(x["design"]["seed"] == 0 for x in got)
    again = page_data(request(server, "GET", "/")[2])
    assert [it.get("label") for it in again["items"][:4]] == ["1", "0", "skip", None]
    assert "3 of" in request(server, "GET", "/")[2]
    # a server started anew on the same file resumes too
    fresh = ReviewSession.open(session.items, labels, "alice")
    assert len(fresh.done) == 3 and fresh.next_open(-1) == 3


def test_every_answer_carries_the_pages_csp_and_the_page_loads_nothing_from_elsewhere(served):
    _, server, _ = served
    status, headers, page = request(server, "GET", "/")
    csp = headers["Content-Security-Policy"]
    assert csp == review_csp()
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "frame-ancestors 'none'" in csp
    meta = review_csp(header=False)  # and in the page, saved or not: frame-ancestors is for the header only
    assert f'http-equiv="Content-Security-Policy" content="{meta}"' in page and "frame-ancestors" not in meta
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # no external script, style, font or image
    status, headers, _ = request(server, "GET", "/other")
    assert status == 404 and headers["Content-Security-Policy"] == csp


def test_another_host_origin_token_or_kind_of_body_is_refused_and_writes_nothing(served):
    session, server, labels = served
    port = server.server_address[1]
    data = page_data(request(server, "GET", "/")[2])
    key = data["items"][0]["key"]
    good = {"token": data["token"], "key": key, "label": 1, "note": ""}
    assert request(server, "GET", "/", Host=f"attacker.example:{port}")[0] == 421  # DNS rebinding
    assert request(server, "POST", "/label", good, Host=f"attacker.example:{port}")[0] == 421
    assert request(server, "POST", "/label", good, Origin="http://attacker.example")[0] == 403
    assert request(server, "POST", "/label", {**good, "token": "guess"})[0] == 403
    assert request(server, "POST", "/label", good, Content_Type="text/plain")[0] == 415
    assert request(server, "POST", "/label", {**good, "key": "other|faithfulness|0|00"})[0] == 400
    assert request(server, "POST", "/label", {**good, "label": 2})[0] == 400
    assert request(server, "POST", "/label", {**good, "label": True})[0] == 400
    assert request(server, "POST", "/label", {**good, "note": "x" * 5000})[0] == 400
    assert not labels.exists() and not session.done
    assert request(server, "GET", "/", Host=f"localhost:{port}")[0] == 200


def test_sample_text_is_data_in_the_page_never_markup(made, tmp_path):
    report = json.loads(made.read_text(encoding="utf-8"))
    evil = "Why? </script><script>alert(1)</script><!-- & <b id=x>"
    for s in report["samples"]:
        s["input"]["question"] = evil
    run = tmp_path / "run.json"
    run.write_text(json.dumps(report), encoding="utf-8")
    session, server = start(run, tmp_path / "l.jsonl")
    try:
        page = request(server, "GET", "/")[2]
    finally:
        server.shutdown()
        server.server_close()
    assert "<script>alert(1)" not in page and "<b id=x>" not in page
    assert page_data(page)["items"][0]["passages"][0]["text"] == evil


def test_the_judges_verdict_is_not_in_the_page_unless_asked(made, tmp_path):
    session = ReviewSession.open(drawn(read_json(made), n=2), tmp_path / "l.jsonl", "alice")
    hidden = page_data(review_page(session, lambda s: item_view(s.item), token="t", report="run.json"))
    shown = page_data(review_page(session, lambda s: item_view(s.item), token="t", report="run.json",
                                  show_judge=True))
    assert all("judge" not in it for it in hidden["items"])
    assert all(it["judge"].startswith("the judge said") for it in shown["items"])


def test_the_command_serves_until_ctrl_c_then_says_where_the_review_stands(made, tmp_path):
    labels = tmp_path / "run.labels.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "localragas", "review", str(made), "--n", "2", "--serve",
                             "--labels", str(labels), "--reviewer", "dana"],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        head = []
        while not head or "serving the review on" not in head[-1]:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            head.append(line)
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", head[-1])
        port = int(url.group(1))

        class Server:
            server_address = ("127.0.0.1", port)

        data = page_data(request(Server, "GET", "/")[2])
        status, _, _ = request(Server, "POST", "/label", {"token": data["token"], "key": data["items"][0]["key"],
                                                          "label": 1, "note": "ok"})
        assert status == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"stopped: 1 of {data['total']} done" in out and f"--labels {labels}" in out
    assert json.loads(labels.read_text(encoding="utf-8"))["reviewer"] == "dana"
