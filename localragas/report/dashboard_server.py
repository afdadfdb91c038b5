"""`localragas view --serve`: a page shown on 127.0.0.1 only (stdlib http.server, a free port unless one is given),
the one listening socket of localragas; it answers GET / with the page and nothing else."""
from __future__ import annotations

import http.server
import threading
from typing import Any


def serve(page: str, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of `page` on 127.0.0.1 (port 0: a free one), running in a thread; its URL: server_url(server).
    Stop it with server.shutdown()."""
    body = page.encode("utf-8")

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            found = self.path in ("/", "/index.html")
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8" if found else "text/plain")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body if found else b"not found")

        def log_message(self, *args: Any) -> None:  # no request log on stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def server_url(server: http.server.ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}/"
