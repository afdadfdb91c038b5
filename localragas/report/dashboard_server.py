"""`localragas view --serve`: a page shown on 127.0.0.1 only (stdlib http.server, a free port unless one is given).
`localragas review --serve` (report/review_server.py) is the same server with a handler that also takes a verdict.
It answers GET and HEAD of / with the page as `render` makes it at that
request (so a run recorded meanwhile appears on reload) and nothing else, and it fails closed:

- a request whose Host header is not the address it listens on (127.0.0.1:PORT, localhost:PORT, [::1]:PORT; without
  the port on port 80) gets 421 and no page: a web page elsewhere cannot read the dashboard by DNS rebinding (its
  own name pointed at 127.0.0.1 arrives as that name in the Host header);
- at most `max_connections` connections are served at once (one thread each; a connection past them gets 503 at
  once), and one that sends nothing for `idle_timeout` seconds is closed: idle sockets cannot pile up threads.
"""
from __future__ import annotations

import errno
import http.server
import threading
import time
from typing import Any, Callable, TypeVar

from ..core.errors import ConfigError

IDLE_TIMEOUT = 10.0  # seconds a connection may stay silent before it is closed
MAX_CONNECTIONS = 16  # connections served at once; a browser opens about 6 to a host


_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 37\r\n"
         b"Connection: close\r\n\r\ntoo many connections: retry shortly\r\n")


class DashboardServer(http.server.ThreadingHTTPServer):
    """The server: `render()` the page at each GET; its Host check, connection cap and idle timeout (above).
    handler: PageHandler or a subclass; `headers` go with every answer; `what` names the page in an error."""

    daemon_threads = True
    request_queue_size = 64  # connections the kernel holds until accepted: a burst is answered, not left waiting
    headers: tuple[tuple[str, str], ...] = ()
    what = "the run history"

    def __init__(self, render: Callable[[], str], port: int, idle_timeout: float, max_connections: int,
                 handler: type[PageHandler] | None = None):
        self.render, self.idle_timeout = render, idle_timeout
        self.slots = threading.BoundedSemaphore(max_connections)
        try:
            super().__init__(("127.0.0.1", port), handler or PageHandler)
        except OSError as e:
            raise ConfigError(_bind_message(port, e)) from None
        self.hosts = allowed_hosts(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        """One thread for the connection while a slot is free; else 503 at once and closed."""
        if not self.slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers the server answers: the loopback names with its port (and without it on port 80, where a
    browser leaves it out)."""
    names = ("127.0.0.1", "localhost", "[::1]")
    return frozenset([f"{n}:{port}" for n in names] + (list(names) if port == 80 else []))


def _bind_message(port: int, e: OSError) -> str:
    if e.errno == errno.EADDRINUSE:
        return f"port {port} on 127.0.0.1 is in use: pick another with --port, or leave --port out for a free one"
    if e.errno in (errno.EACCES, errno.EPERM):
        return (f"port {port} on 127.0.0.1 may not be opened by this user (ports below 1024 need privileges): pick "
                "another with --port, or leave --port out for a free one")
    return f"cannot listen on 127.0.0.1 port {port}: {e.strerror or e}: pick another with --port"


class PageHandler(http.server.BaseHTTPRequestHandler):
    """GET and HEAD of / answered with the server's page, after the Host check."""

    server: DashboardServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)  # a read waits this long: an idle connection closes

    def wrong_host(self, body: bool = True) -> bool:
        """Whether the Host header names another server than this one; if so it has been answered 421."""
        host = (self.headers.get("Host") or "").strip().lower()
        if host in self.server.hosts:
            return False
        port = self.server.server_address[1]
        self.send(421, "text/plain; charset=utf-8", f"this server answers only http://127.0.0.1:{port}/ and "
                  f"http://localhost:{port}/, not the host {host or '(none)'}\n".encode(), body)
        return True

    def _answer(self, body: bool) -> None:
        if self.wrong_host(body):
            return
        if self.path not in ("/", "/index.html"):
            self.send(404, "text/plain; charset=utf-8", b"not found\n", body)
        else:
            try:
                page = self.server.render().encode("utf-8")
            except Exception as e:  # noqa: BLE001 - the history cannot be read now: said on the page, served on
                self.send(503, "text/plain; charset=utf-8", f"{self.server.what} cannot be shown: {e}\n".encode(),
                          body)
                return
            self.send(200, "text/html; charset=utf-8", page, body)

    def send(self, status: int, kind: str, payload: bytes, body: bool = True) -> None:
        """The answer: status, the payload of its kind (written when body), no caching, the server's headers."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        for name, value in self.server.headers:
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self._answer(body=False)

    def log_message(self, *args: Any) -> None:  # no request log on stderr
        pass


def serve(render: Callable[[], str], port: int = 0, *, idle_timeout: float = IDLE_TIMEOUT,
          max_connections: int = MAX_CONNECTIONS) -> DashboardServer:
    """A server of the page `render()` makes at each request, on 127.0.0.1 (port 0: a free one), running in a
    thread; its URL: server_url(server). A port it cannot listen on: ConfigError saying why and --port. Stop it with
    server.shutdown() and server.server_close()."""
    return started(DashboardServer(render, port, idle_timeout, max_connections))


Server = TypeVar("Server", bound=http.server.HTTPServer)


def started(server: Server) -> Server:
    """The server, serving in a thread of its own."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve_until_interrupted(server: http.server.HTTPServer) -> None:
    """Wait while the server serves; at Ctrl-C stop it and close its socket."""
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()


def server_url(server: http.server.HTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}/"

