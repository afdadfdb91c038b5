"""The openai backend's `timeout` is a deadline for one whole request (connect, send, wait, read): a server that
trickles a valid reply a byte at a time, too slowly for the deadline but fast enough for any single read, is cut
off, retried like any timeout, and ends the run with exit 4 (the gate fails closed) instead of keeping it waiting.

The stub server sends its reply one byte every TRICKLE seconds: the status line and headers too (`head`), or only
the body (`body`). CAP seconds after the server started it stops trickling and answers at once, so a client without
a deadline (the old per-read timeout) finishes soon after CAP, and the test fails instead of hanging."""
from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from localragas.core.errors import JudgeError
from localragas.core.reply_schemas import Claims
from localragas.judges import Judging, get_judge
from localragas.prompts import extract_claims

from cli_helpers import cli, write_jsonl
from stub_server import StubServer

TRICKLE = 0.5  # seconds between two bytes: far below the timeouts used here, so no single read ever times out
CAP = 20.0  # seconds after the server started; past them, every reply goes at once


def reply_to(body: dict) -> bytes:
    """A whole, valid HTTP reply: a graded verdict's one token with its log-probabilities, or one claim."""
    if body.get("logprobs"):
        top = [{"token": "yes", "logprob": math.log(0.9)}, {"token": "no", "logprob": math.log(0.1)}]
        choice = {"message": {"role": "assistant", "content": "yes"},
                  "logprobs": {"content": [{"token": "yes", "logprob": top[0]["logprob"], "top_logprobs": top}]}}
    else:
        choice = {"message": {"role": "assistant", "content": json.dumps({"claims": ["Paris is in France."]})}}
    payload = json.dumps({"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", **choice}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 1}}).encode()
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n").encode()
    return head + payload


class TrickleServer:
    """An OpenAI-compatible stub on 127.0.0.1 that sends each reply a byte at a time: all of it, or the body."""

    def __init__(self, what: str):
        self.what = what
        self.stop = threading.Event()
        self.until = time.monotonic() + CAP
        self.requests = 0
        self.lock = threading.Lock()
        self.http = StubServer(self.on_post)
        self.url = self.http.url

    def on_post(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        with self.lock:
            self.requests += 1
        reply = reply_to(body)
        slow_from = 0 if self.what == "head" else reply.index(b"\r\n\r\n") + 4
        sent = slow_from
        try:
            h.wfile.write(reply[:slow_from])
            while sent < len(reply) and time.monotonic() < self.until and not self.stop.is_set():
                h.wfile.write(reply[sent:sent + 1])
                h.wfile.flush()
                sent += 1
                self.stop.wait(TRICKLE)
            h.wfile.write(reply[sent:])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up
        finally:
            h.close_connection = True

    def close(self) -> None:
        self.stop.set()
        self.http.close()


@pytest.fixture(params=["head", "body"])
def trickle(request):
    s = TrickleServer(request.param)
    yield s
    s.close()


def test_a_trickled_reply_passes_the_deadline_is_retried_and_ends_as_a_judge_error(trickle):
    judge = get_judge("openai:stub-model", {"base_url": trickle.url, "timeout": 1, "retries": 1})
    judge._sleep = lambda s: None  # no backoff wait
    start = time.monotonic()
    with pytest.raises(JudgeError, match=r"unreachable after 2 attempts: .*no complete reply within 1 s \(timeout=1"):
        Judging(judge).generate(extract_claims("Paris is in France."), Claims)
    assert time.monotonic() - start < 5  # two attempts of 1 s each (the backoff sleep is replaced here)
    assert trickle.requests == 2


def test_a_server_trickling_its_reply_ends_the_eval_with_exit_4_naming_the_timeout(trickle, tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": "s1", "question": "What is the capital of France?",
                                               "contexts": ["Paris is the capital of France."],
                                               "answer": "Paris is the capital of France."}])
    out = tmp_path / "report.json"
    start = time.monotonic()
    r = cli("eval", data, "--judge", "openai:stub-model", "--judge-option", f"base_url={trickle.url}",
            "--judge-option", "timeout=2", "--judge-option", "retries=0", "-m", "faithfulness", "-e", "fake",
            "--no-cache", "--no-progress", "--out", out)
    elapsed = time.monotonic() - start
    assert elapsed < 15, f"the eval took {elapsed:.0f} s: the timeout did not bound the request\n{r.output}"
    assert r.exit_code == 4, r.output
    said = " ".join(r.output.split())  # the console wraps long lines
    assert "could not evaluate" in said and "no complete reply within 2 s (timeout=2: one whole request)" in said
    (sample,) = json.loads(out.read_text())["samples"]
    assert "no complete reply within 2 s" in sample["metrics"]["faithfulness"]["unscored"]
    assert trickle.requests >= 1  # each cut off after 2 s
