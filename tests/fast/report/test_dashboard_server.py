"""`localragas view --serve` (localragas/report/dashboard_server.py) fails closed: it answers only requests addressed
to the loopback name and port it listens on (no page for another host's name: DNS rebinding), holds a bounded number
of connections and closes idle ones, shows the history as it is at each request (a new run appears on reload), answers
HEAD, and says a busy port is busy."""
from __future__ import annotations

import http.client
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import localragas
from localragas.report.dashboard_server import allowed_hosts, serve

from cli_helpers import cli, ctrl_c_as_in_a_terminal, sample_rows

ROOT = Path(__file__).resolve().parents[3]
FAKE = {"judge": "fake", "embedder": "fake", "cache": False, "progress": False, "metrics": ["faithfulness"]}


def _ask(port: int, method: str = "GET", path: str = "/", host: str | None = None) -> tuple[int, dict, bytes]:
    """(status, headers, body) of one request to 127.0.0.1:port with this Host header (default: 127.0.0.1:port)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        conn.endheaders()
        got = conn.getresponse()
        return got.status, dict(got.getheaders()), got.read()
    finally:
        conn.close()


@pytest.fixture
def live():
    """`localragas view --serve` in its own process on the test's history (LOCALRAGAS_STATE_DIR); its port."""
    localragas.evaluate(sample_rows(2), **FAKE, name="first")
    proc = subprocess.Popen([sys.executable, "-m", "localragas", "view", "--serve"], cwd=ROOT, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        line = proc.stdout.readline() if ready else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, (line, proc.poll())
        yield int(found.group(1))
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: it stops
        try:
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            proc.stderr.close()


def test_served_page_is_the_history_now_answers_head_and_only_its_own_host(live):
    status, headers, body = _ask(live)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert b"1 of 1 run(s)" in body and b">first<" in body
    localragas.evaluate(sample_rows(2), **FAKE, name="second")  # recorded while the page is served
    status, _, body = _ask(live)
    assert status == 200 and b"2 of 2 run(s)" in body and b">second<" in body  # a reload shows it
    status, headers, body = _ask(live, "HEAD")
    assert (status, body) == (200, b"") and headers["Content-Type"] == "text/html; charset=utf-8"
    assert int(headers["Content-Length"]) > 1000  # the page's length, not sent
    for host in (f"localhost:{live}", f"LOCALHOST:{live}", f"[::1]:{live}"):
        assert _ask(live, host=host)[0] == 200
    # a page of another site whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own name: no page
    for host in (f"attacker.example:{live}", "attacker.example", f"127.0.0.1:{live + 1}", "localhost", ""):
        status, _, body = _ask(live, host=host)
        assert (status, body.decode()) == (421, f"this server answers only http://127.0.0.1:{live}/ and "
                                                f"http://localhost:{live}/, not the host {host.lower() or '(none)'}\n")
    status, _, body = _ask(live, "HEAD", host=f"attacker.example:{live}")
    assert (status, body) == (421, b"")
    assert _ask(live, path="/history.sqlite")[0] == 404


def test_the_hosts_answered_are_the_loopback_names_with_the_port():
    assert allowed_hosts(8123) == {"127.0.0.1:8123", "localhost:8123", "[::1]:8123"}
    assert allowed_hosts(80) >= {"127.0.0.1", "localhost", "[::1]"}  # a browser leaves port 80 out


def test_idle_connections_are_bounded_and_closed_after_the_timeout():
    server = serve(lambda: "<!DOCTYPE html><p>runs</p>", idle_timeout=0.5, max_connections=4)
    port = server.server_address[1]
    base = threading.active_count()
    socks = []
    try:
        for _ in range(60):  # idle: connected, nothing sent
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(0.3)
        assert threading.active_count() <= base + 4  # one thread a connection served, at most 4
        answers = []
        for s in socks:  # past the cap: 503 at once and closed; the 4 served ones closed once idle 0.5 s
            data, started = b"", time.monotonic()
            while chunk := s.recv(4096):
                data += chunk
            answers.append((data, time.monotonic() - started))
        assert sum(1 for data, _ in answers if data == b"") == 4  # timed out: closed without a word
        assert all(data.startswith(b"HTTP/1.0 503") and b"too many connections" in data
                   for data, _ in answers if data)
        assert max(waited for _, waited in answers) < 5
        deadline = time.monotonic() + 5
        while threading.active_count() > base and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= base  # every connection's thread has ended
        status, _, body = _ask(port)  # and it still serves
        assert (status, body) == (200, b"<!DOCTYPE html><p>runs</p>")
    finally:
        for s in socks:
            s.close()
        server.shutdown()
        server.server_close()


def test_a_page_that_cannot_be_made_now_is_a_503_with_the_reason():
    def broken() -> str:
        raise OSError("the disk went away")

    server = serve(broken)
    try:
        status, _, body = _ask(server.server_address[1])
        assert status == 503 and body == b"the run history cannot be shown: the disk went away\n"
    finally:
        server.shutdown()
        server.server_close()


def test_a_busy_port_says_so_and_names_port():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        r = cli("view", "--serve", "--port", port)
    finally:
        taken.close()
    assert r.exit_code == 2
    assert r.output == (f"Error: port {port} on 127.0.0.1 is in use: pick another with --port, or leave --port out "
                        "for a free one\n")
