"""The one local HTTP stub the fast tier's OpenAI-compatible judges run against: http.server on 127.0.0.1, port 0,
a thread per request. Each test module says what a POST gets (`on_post(handler, body)`, body the request's JSON);
this holds the socket, the serving thread, the address and the JSON reply."""
from __future__ import annotations

import json
import socket
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


# --- a judge server answering graded verdicts, by a policy ----------------------------------------------------------
# The policies a test gives GradedJudge: a judge that reads the content (separating), content-blind ones (always),
# position-gaming ones (periodic: the answer depends only on how many calls came before), and one right on the judge
# check's own items and blind to everything else (check_then). Two servers behind base_url=A,B are two round-robin
# replicas.

Policy = Callable[[str], float]  # the request's user message -> P(yes)


def separating(user: str) -> float:
    """A judge that can judge: the fake judge's word-overlap rules (a statement by its share of words in the
    contexts, a chunk by the words it shares with the reference), kept inside (0, 1)."""
    from localragas.judges.fake import _between, _graded_share, _words

    statement = " ".join(_between(user, "statement"))
    contexts = " ".join(_between(user, "context"))
    if statement:
        p = _graded_share(_words(statement), contexts)
    else:
        target = " ".join(_between(user, "reference") or _between(user, "answer") or _between(user, "question"))
        shared = len(_words(contexts) & _words(target))
        p = 1.0 if shared >= 3 else shared / 6
    return min(max(p, 0.01), 0.99)


def always(p: float) -> Policy:
    """Content-blind: every question gets P(yes) p (0.99: a yes-machine; 0.01: a no-machine)."""
    return lambda user: p


def periodic(values: list[float]) -> Policy:
    """Position-gaming: the n-th call (from 0) gets values[n % len(values)], whatever it asks; [0.99, 0.01]
    alternates yes and no call by call."""
    lock, count = threading.Lock(), [0]

    def policy(user: str) -> float:
        with lock:
            n, count[0] = count[0], count[0] + 1
        return values[n % len(values)]
    return policy


# words only the judge check's own items hold (run/judge_check_items.py): its statements' context and its chunks'
# question, in English and Chinese
CHECK_MARKS = ("Eiffel", "故宫", "boil", "沸点")


def check_then(p: float) -> Policy:
    """Right on the judge check's own items (it reads them), then content-blind: P(yes) p to everything else."""
    return lambda user: separating(user) if any(m in user for m in CHECK_MARKS) else p


class GradedJudge:
    """An OpenAI-compatible server answering graded verdicts only: P(yes) = policy(the user message), in the top
    log-probabilities the openai backend reads. `asked`: each request's user message, in order."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self.asked: list[str] = []
        self.http = StubServer(self.on_post)
        self.url = self.http.url

    def on_post(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        import math

        user = body["messages"][-1]["content"]
        self.asked.append(user)
        p = self.policy(user)
        top = [{"token": "yes", "logprob": math.log(p)}, {"token": "no", "logprob": math.log(1 - p)}]
        send_json(h, {"id": "stub", "object": "chat.completion", "model": body.get("model"),
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "yes"},
                                   "logprobs": {"content": [{"token": "yes", "logprob": top[0]["logprob"],
                                                             "top_logprobs": top}]}}],
                      "usage": {"prompt_tokens": len(user.split()), "completion_tokens": 1, "total_tokens": 0}})

    def close(self) -> None:
        self.http.close()


def silent_server() -> tuple[int, socket.socket]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word (a scheduler or tracking server
    that hangs): (its port, the socket; close it to stop)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []

    def serve():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1], server
