"""The one local HTTP stub the fast tier's OpenAI-compatible judges run against: http.server on 127.0.0.1, port 0,
a thread per request. Each test module says what a POST gets (`on_post(handler, body)`, body the request's JSON);
this holds the socket, the serving thread, the address and the JSON reply."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubServer:
    """Serves until close(); `url` is the OpenAI base URL (…/v1)."""

    def __init__(self, on_post: Callable[[BaseHTTPRequestHandler, dict], None]):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                on_post(self, json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def send_json(handler: BaseHTTPRequestHandler, payload: dict, status: int = 200,
              headers: dict[str, str] | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
