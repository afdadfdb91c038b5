"""`localragas review --serve`: the review page (report/review_page.py) on 127.0.0.1 only, and the one thing it
accepts: a verdict posted by that page, appended to the labels file (quality/review_session.py, data/labels.py
append_label). The server is the dashboard's (report/dashboard_server.py: the Host check against DNS rebinding, the
connection cap, idle connections closed, a port it cannot listen on said with --port) with a handler that also takes
POST /label.

GET / is the page as the labels file stands (a reload resumes); POST /label takes {"token", "key", "label": 1 | 0 |
null, "note"}. Only the page this server made can post: the request must name this server as its Host, come from
this server's origin, carry JSON (which a page of another origin cannot send without this server's consent) and the
page's random token. Every answer carries the page's Content-Security-Policy.
"""
from __future__ import annotations

import json
import secrets
import threading
from typing import Any, Callable

from ..core.errors import LocalragasError, environment_message
from ..quality.review_session import ReviewSession
from .dashboard_server import IDLE_TIMEOUT, MAX_CONNECTIONS, DashboardServer, PageHandler, started
from .review_page import review_csp

MAX_BODY = 64 * 1024  # a verdict is a few hundred bytes
MAX_NOTE = 2000  # characters of a note


class Refused(Exception):
    """A request the server does not take: its HTTP status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


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


class ReviewServer(DashboardServer):
    """The dashboard's server holding a review: its session, the page's token, and a lock so that one verdict at a
    time is recorded (the session's record of what is done stays whole)."""

    what = "the review"

    def __init__(self, session: ReviewSession, page: Callable[[str], str], port: int) -> None:
        self.session, self.token, self.lock = session, secrets.token_urlsafe(24), threading.Lock()
        self.headers = (("Content-Security-Policy", review_csp()), ("X-Content-Type-Options", "nosniff"),
                        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
                        ("Cross-Origin-Resource-Policy", "same-origin"))
        super().__init__(lambda: page(self.token), port, IDLE_TIMEOUT, MAX_CONNECTIONS, handler=ReviewHandler)


class ReviewHandler(PageHandler):
    """The page's handler (GET, HEAD) and POST /label."""

    server: ReviewServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.wrong_host():
            return
        server = self.server
        try:
            if self.path != "/label":
                raise Refused(404, "not found")
            if self.headers.get("Origin", "") not in {f"http://{h}" for h in server.hosts}:
                raise Refused(403, "a verdict is taken from this server's own page only")
            if not self.headers.get("Content-Type", "").lower().startswith("application/json"):
                raise Refused(415, "a verdict is JSON")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                raise Refused(400, "bad Content-Length") from None
            if not 0 < length <= MAX_BODY:
                raise Refused(413, f"a verdict is at most {MAX_BODY} bytes")
            key, label, note = parse_verdict(self.rfile.read(length), server.session, server.token)
            with server.lock:
                server.session.record(server.session.find(key), label, note)  # type: ignore[arg-type]
                done = len(server.session.done)
        except Refused as e:
            self.send(e.status, "text/plain; charset=utf-8", str(e).encode())
            return
        except (OSError, LocalragasError) as e:  # the labels file could not be written: said on the page
            why = environment_message(e) if isinstance(e, OSError) else str(e)
            self.send(500, "text/plain; charset=utf-8", f"the label was not saved: {why}".encode())
            return
        self.send(200, "application/json", json.dumps({"done": done, "total": server.session.total}).encode())


def serve_review(session: ReviewSession, page: Callable[[str], str], port: int = 0) -> ReviewServer:
    """A server of the review on 127.0.0.1 (port 0: a free one), running in a thread; `page(token)` renders the
    page as the session stands. Its URL: dashboard_server.server_url(server); stop it with server.shutdown() and
    server.server_close() (or dashboard_server.serve_until_interrupted)."""
    return started(ReviewServer(session, page, port))
