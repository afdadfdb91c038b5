"""The user's RAG pipeline as `localragas run-rag` calls it: a Python callable or an HTTP endpoint, and the reply
both must give.

Python: `--target module:function` (a module importable from the current folder) or `--target path/to/file.py:function`.
The function is called as `fn(question: str)` and returns a dict {"answer": str, "contexts": [str, ...],
"retrieved_context_ids": [str, ...] (optional)}, or a 2-tuple (answer, contexts). A function with a parameter named
`history` (or `chat_history`) is a chat function: it is called as `fn(question, history=[{"role", "content"}, ...])`
with the conversation before the question ([] for a single question): the only kind a test set's conversations are
asked of (history_parameter). The name may instead be a LangChain runnable or a LlamaIndex query or chat engine
(testset/frameworks.py asks it and collects what it retrieved).

HTTP: `--url http://host/path`: POST of JSON {"question": ..., "id": ...} (Content-Type: application/json), plus
"history" (the messages before the question) for a conversation's turn; the reply is JSON of the dict above. A timeout, a connection error or a 5xx status is retried (with backoff); a 4xx status or a
malformed reply is not. Standard library only (urllib).
"""
from __future__ import annotations

import http.client
import importlib
import importlib.util
import json
import socket
import sys
import threading
import urllib.error
import urllib.request
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.number_text import seconds_text
from ..data.sample_record import unicode_problem
from .frameworks import framework_pipeline

MAX_REPLY_BYTES = 64 << 20  # an HTTP reply longer than this is malformed
# The names a chat function takes the conversation so far by (Gradio's ChatInterface and LangChain's), and the keys a
# LangChain chain's input takes it under.
HISTORY_PARAMETERS = ("history", "chat_history")
History = list[dict[str, str]]  # the messages before a question: {"role": "system" | "user" | "assistant", "content"}


class RowFailure(Exception):
    """One question's call failed: the message recorded in the row; retry: worth another try (timeout, 5xx,
    connection); unreachable: the pipeline could not be reached (no connection), which run-rag counts to stop a run
    whose pipeline is down."""

    def __init__(self, message: str, retry: bool, unreachable: bool = False):
        super().__init__(message)
        self.retry = retry
        self.unreachable = unreachable


@dataclass(frozen=True)
class RagReply:
    answer: str
    contexts: list[str]
    retrieved_context_ids: list[str] | None = None

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answer": self.answer, "contexts": self.contexts}
        if self.retrieved_context_ids is not None:
            out["retrieved_context_ids"] = self.retrieved_context_ids
        return out


def parse_reply(value: Any) -> RagReply:
    """The pipeline's reply checked: RowFailure ("malformed reply: …", not retried) naming what is wrong."""
    if isinstance(value, tuple) and len(value) == 2:
        value = {"answer": value[0], "contexts": value[1]}
    if not isinstance(value, dict):
        raise RowFailure(f"malformed reply: expected an object with answer and contexts, got {type(value).__name__}",
                         retry=False)
    answer, contexts, ids = value.get("answer"), value.get("contexts"), value.get("retrieved_context_ids")
    if not isinstance(answer, str):
        raise RowFailure(f"malformed reply: 'answer' must be a string, got {type(answer).__name__}", retry=False)
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise RowFailure("malformed reply: 'contexts' must be a list of strings", retry=False)
    if ids is not None and (not isinstance(ids, list) or
                            not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids)):
        raise RowFailure("malformed reply: 'retrieved_context_ids' must be a list of strings", retry=False)
    return RagReply(_text(answer, "'answer'"), [_text(c, "a context") for c in contexts],
                    None if ids is None else [_text(str(i), "a retrieved context id") for i in ids])


def reply_json(raw: bytes) -> Any:
    """An HTTP reply's body as JSON; RowFailure ("malformed reply: …", not retried) when it is not UTF-8 JSON, or is
    nested too deep for Python's parser (200,000 brackets): that row's failure, never the run's."""
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise RowFailure(f"malformed reply: JSON nested too deep to read ({raw[:40]!r}…)", retry=False) from None
    except (UnicodeDecodeError, ValueError):
        raise RowFailure(f"malformed reply: not JSON ({raw[:80]!r})", retry=False) from None


def _text(value: str, what: str) -> str:
    """A string of the reply, refused (RowFailure) when no file could hold it (a lone surrogate)."""
    problem = unicode_problem(value)
    if problem:
        raise RowFailure(f"malformed reply: {what}: {problem}", retry=False)
    return value


def history_parameter(fn: Callable[..., Any]) -> str | None:
    """The parameter `fn` takes a conversation's history by: a framework wrapper's own `history_parameter`
    (testset/frameworks.py), else the first of HISTORY_PARAMETERS its signature names (that can be passed by name);
    None for a function of the question alone."""
    if hasattr(fn, "history_parameter"):
        return fn.history_parameter
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or extension function without a signature
        return None
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return next((p for p in HISTORY_PARAMETERS if p in parameters and parameters[p].kind in by_name), None)


def call_target(fn: Callable[..., Any], parameter: str | None, question: str, history: History | None) -> Any:
    """fn asked the question: with the history ([] when none) under `parameter` when it takes one, else alone (run-rag
    asks a conversation's turns only of a function that takes a history)."""
    if parameter is None:
        return fn(question)
    return fn(question, **{parameter: [dict(m) for m in history or []]})  # copies: the function may change them


def check_target(target: str) -> tuple[str, str]:
    """(module or file, function) of a --target, its form checked (and a file's existence) without importing it."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(f"--target: '{target}' must look like module:function or path/to/file.py:function")
    if where.endswith(".py") and not Path(where).is_file():
        raise ConfigError(f"--target: {where} is not a file")
    return where, name


def load_callable(target: str) -> Callable[..., Any]:
    """The function a --target names: 'module:function' (importable from the current folder) or
    'path/to/file.py:function'."""
    where, name = check_target(target)
    if where.endswith(".py"):
        path = Path(where)
        spec = importlib.util.spec_from_file_location(f"localragas_target_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise ConfigError(f"--target: cannot import module '{where}' from {Path.cwd()} ({e})") from None
    fn = getattr(module, name, None)
    chain = framework_pipeline(fn)
    if chain is not None:
        return chain
    if not callable(fn):
        raise ConfigError(f"--target: '{where}' has no function '{name}' (nor a LangChain runnable or LlamaIndex "
                          "query engine by that name)")
    return fn


class CallableTarget:
    """A Python function that no worker process can import by name (a lambda, a closure, a notebook's function: see
    rag_worker.ProcessTarget for the others), each call in a thread of its own so that a timeout can be kept; a call
    that times out cannot be stopped: it is left to finish in the background, its result ignored, and the row says
    so."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.name = getattr(fn, "__qualname__", repr(fn))
        self.history_parameter = history_parameter(fn)

    def __call__(self, question: str, row_id: str, timeout: float, history: History | None = None) -> Any:
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = call_target(self.fn, self.history_parameter, question, history)
            except BaseException as e:  # noqa: BLE001 - the user's code: any error is the row's
                box["error"] = e

        worker = threading.Thread(target=call, name=f"run-rag {row_id}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise RowFailure(f"timed out after {seconds_text(timeout, digits=None)}; the call could not be stopped "
                             "(a function not importable by name runs in a thread)", retry=True)
        if "error" in box:
            e = box["error"]
            raise RowFailure(f"{type(e).__name__}: {e}", retry=isinstance(e, (TimeoutError, ConnectionError)),
                             unreachable=isinstance(e, ConnectionError))
        return box["value"]


class HttpTarget:
    """An HTTP endpoint: POST {"question", "id"} (and "history" for a conversation's turn), JSON back. The timeout is a deadline for the whole request
    (connect, send, wait, read): at the deadline the connection is shut, so a server that trickles its reply a byte
    at a time cannot hold the row past it."""

    def __init__(self, url: str):
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"--url: '{url}' must start with http:// or https://")
        self.url = self.name = url
        self.history_parameter = "history"  # in the body: an endpoint that does not read it is the user's to know

    def __call__(self, question: str, row_id: str, timeout: float, history: History | None = None) -> Any:
        fields: dict[str, Any] = {"question": question, "id": row_id}
        if history is not None:
            fields["history"] = history
        body = json.dumps(fields).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        timed_out = RowFailure(f"timed out after {seconds_text(timeout, digits=None)}", retry=True)
        connections = _Connections()
        clock = threading.Timer(timeout, connections.expire)
        clock.daemon = True
        clock.start()
        try:
            with _opener(connections).open(request, timeout=timeout) as reply:
                raw = reply.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as e:
            if connections.expired:
                raise timed_out from None
            raise RowFailure(f"HTTP {e.code} {e.reason}", retry=e.code >= 500) from None
        except TimeoutError:
            raise timed_out from None
        except urllib.error.URLError as e:
            if connections.expired or isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise timed_out from None
            raise RowFailure(f"cannot connect: {e.reason}", retry=True, unreachable=True) from None
        except (ConnectionError, OSError, http.client.HTTPException) as e:
            if connections.expired:
                raise timed_out from None
            raise RowFailure(f"connection error: {e}", retry=True, unreachable=True) from None
        finally:
            clock.cancel()
        if connections.expired:  # the deadline passed as the last bytes came: what came may be cut short
            raise timed_out
        if len(raw) > MAX_REPLY_BYTES:
            raise RowFailure(f"malformed reply: longer than {MAX_REPLY_BYTES} bytes", retry=False)
        return reply_json(raw)


class _Connections:
    """The sockets of one request; expire() (at its deadline) shuts them, which ends a read blocked in them."""

    def __init__(self):
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            if self.expired:
                _shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._socks:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _opener(connections: _Connections) -> urllib.request.OpenerDirector:
    """urllib's opener (proxies and redirects as usual) whose HTTP(S) connections register their sockets."""

    class Http(http.client.HTTPConnection):
        def connect(self):
            super().connect()
            connections.add(self.sock)

    class Https(http.client.HTTPSConnection):
        def connect(self):
            super().connect()
            connections.add(self.sock)

    class HttpHandler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(Http, req)

    class HttpsHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            more = {"check_hostname": self._check_hostname} if getattr(self, "_check_hostname", None) is not None else {}
            return self.do_open(Https, req, context=self._context, **more)  # as urllib's own (3.10, 3.11; 3.12 on)

    return urllib.request.build_opener(HttpHandler, HttpsHandler)
