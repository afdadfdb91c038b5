"""`localragas review --serve`: the review page (report/review_page.py) on 127.0.0.1 only (stdlib http.server, a free
port unless one is given), and the one thing it accepts: a verdict posted by that page, appended to the labels file
(quality/review_session.py, data/labels.py append_label).

GET / is the page as the labels file stands (a reload resumes); POST /label takes {"token", "key", "label": 1 | 0 |
null, "note"}. Only the page this server made can post: the request must name this server as its Host (another name
is a page of some other site reaching here through DNS rebinding), come from this server's origin, carry JSON (which a
page of another origin cannot send without this server's consent) and the page's random token. Every answer carries
the page's Content-Security-Policy.
"""
from __future__ import annotations

import http.server
import json
import secrets
import threading
from typing import Any, Callable

from ..core.errors import LocalragasError, environment_message
from ..quality.review_session import ReviewSession
from .review_page import review_csp

MAX_BODY = 64 * 1024  # a verdict is a few hundred bytes
MAX_NOTE = 2000  # characters of a note
IDLE_TIMEOUT = 10.0  # seconds a connection may stay silent


class Refused(Exception):
    """A request the server does not take: its HTTP status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def local_hosts(port: int) -> frozenset[str]:
    """The Host header values that name this server: 127.0.0.1 or localhost at its port."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def parse_verdict(body: bytes, session: ReviewSession, token: str) -> tuple[str, Any, str]:
    """(key, label, note) of a posted verdict, or Refused naming what is wrong: not JSON, a wrong token, an item not
    drawn in this review, a label other than 1 / 0 / null, a note that is not text or too long."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Refused(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise Refused(400, "the body is not a JSON object")
    if not secrets.compare_digest(str(data.get("token", "")), token):
        raise Refused(403, "wrong token: reload the page")
    key, label, note = data.get("key"), data.get("label"), data.get("note", "")
    if not isinstance(key, str) or session.find(key) is None:
        raise Refused(400, f"no item {str(key)[:80]!r} in this review")
    if label not in (1, 0, None) or isinstance(label, bool):
        raise Refused(400, "label must be 1 (yes), 0 (no) or null (skip)")
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise Refused(400, f"note must be text of at most {MAX_NOTE} characters")
    return key, label, note


def serve_review(session: ReviewSession, page: Callable[[str], str], port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of the review on 127.0.0.1 (port 0: a free one), running in a thread; `page(token)` renders the
    page as the session stands. Its URL: report/dashboard_server.py server_url(server); stop it with server.shutdown()."""
    token = secrets.token_urlsafe(24)
    lock = threading.Lock()  # one verdict at a time: the session's record of what is done stays whole
    csp = review_csp()

    class Review(http.server.BaseHTTPRequestHandler):
        timeout = IDLE_TIMEOUT  # a connection silent this long is closed: idle sockets do not pile up threads

        def _answer(self, status: int, body: bytes, kind: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            for name, value in (("Content-Type", kind), ("Content-Length", str(len(body))),
                                ("Cache-Control", "no-store"), ("Content-Security-Policy", csp),
                                ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
                                ("Referrer-Policy", "no-referrer"), ("Cross-Origin-Resource-Policy", "same-origin")):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _check_host(self) -> None:
            if (self.headers.get("Host") or "").strip().lower() not in hosts:
                raise Refused(421, "this server answers to 127.0.0.1 and localhost only")

        def _refused(self, e: Refused) -> None:
            self._answer(e.status, str(e).encode())

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            try:
                self._check_host()
                if self.path not in ("/", "/index.html"):
                    raise Refused(404, "not found")
                with lock:
                    body = page(token).encode("utf-8")
                self._answer(200, body, "text/html; charset=utf-8")
            except Refused as e:
                self._refused(e)

        def do_POST(self) -> None:  # noqa: N802
            try:
                self._check_host()
                if self.path != "/label":
                    raise Refused(404, "not found")
                origin = self.headers.get("Origin", "")
                if origin not in {f"http://{h}" for h in hosts}:
                    raise Refused(403, "a verdict is taken from this server's own page only")
                if not self.headers.get("Content-Type", "").lower().startswith("application/json"):
                    raise Refused(415, "a verdict is JSON")
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= MAX_BODY:
                    raise Refused(413, f"a verdict is at most {MAX_BODY} bytes")
                key, label, note = parse_verdict(self.rfile.read(length), session, token)
                with lock:
                    session.record(session.find(key), label, note)  # type: ignore[arg-type]
                    done = len(session.done)
                self._answer(200, json.dumps({"done": done, "total": session.total}).encode(),
                             "application/json")
            except Refused as e:
                self._refused(e)
            except ValueError:
                self._refused(Refused(400, "bad Content-Length"))
            except (OSError, LocalragasError) as e:  # the labels file could not be written: say so on the page
                why = environment_message(e) if isinstance(e, OSError) else str(e)
                self._answer(500, f"the label was not saved: {why}".encode())

        def log_message(self, *args: Any) -> None:  # no request log on stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Review)
    hosts = local_hosts(server.server_port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server

