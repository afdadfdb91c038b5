"""`localragas run-rag --target`: the user's Python function run in worker processes of its own, so that a call
past its timeout is stopped, never left running in the background.

A worker is a fresh interpreter (this one's executable, sys.path and working folder; no re-run of the caller's main
module, unlike multiprocessing's 'spawn') that imports the function by its 'module:function' or 'file.py:function'
name once, then answers one question at a time: JSON lines over its standard input and output ({"question",
"history"} in, the checked reply out; its first line says which parameter the function takes a history by; what the
function prints goes to standard error; its reply is checked there and sent as plain JSON, so nothing of the user's
module is ever unpickled here). Workers are kept between calls, one per call in flight (`--concurrency N` starts up to N, each
importing the pipeline once); a worker whose call timed out is killed and the next call starts a new one; a worker
that dies during a call (os._exit, a crash) fails that row and is replaced. Overhead, measured on 2 cores: 0.14 ms
a call, 80 ms a worker start plus the pipeline's own import (docs/generate.md#run-rag-the-contract).
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
import weakref
from typing import Any, Callable

from ..core.errors import ConfigError
from ..core.number_text import seconds_text
from .rag_targets import History, RowFailure, call_target, check_target, history_parameter, load_callable, parse_reply

_STOP_SECONDS = 2.0  # a worker told to end (its input closed) has this long before it is killed
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "from localragas.testset.rag_worker import serve; serve()")
_LIVE: "weakref.WeakSet[ProcessTarget]" = weakref.WeakSet()


def importable_name(fn: Callable[..., Any]) -> str | None:
    """'module:function' (or 'file.py:function') a worker can import `fn` by: a function defined at the top of a
    module that is not __main__; None otherwise (a lambda, a closure, a method, a function of a notebook or script)."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    loaded = sys.modules.get(module or "")
    if not module or module == "__main__" or not name.isidentifier() or getattr(loaded, name, None) is not fn:
        return None
    try:
        if importlib.util.find_spec(module) is not None:
            return f"{module}:{name}"
    except (ImportError, ValueError):
        pass
    file = getattr(loaded, "__file__", None)  # a module loaded from its file (a 'file.py:function' target)
    return f"{file}:{name}" if isinstance(file, str) and file.endswith(".py") else None


def serve() -> None:
    """The worker's main: the first line names the target; then one question (and its history) a line, one reply a
    line."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    questions = os.fdopen(os.dup(0), "r", encoding="utf-8")
    os.dup2(2, 1)  # the function's prints go to standard error, never into the replies
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)

    def send(*message: Any) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    target = json.loads(questions.readline())
    try:
        fn = load_callable(target)
    except ConfigError as e:
        return send("config", str(e))
    except BaseException as e:  # noqa: BLE001 - the user's module failed to import
        return send("config", f"--target: importing '{target}' failed: {type(e).__name__}: {e}")
    parameter = history_parameter(fn)
    send("ready", parameter)
    for line in questions:
        try:
            asked = json.loads(line)
            value = call_target(fn, parameter, asked["question"], asked["history"])
        except BaseException as e:  # noqa: BLE001 - the user's code: any error is the row's
            send("error", f"{type(e).__name__}: {e}", isinstance(e, (TimeoutError, ConnectionError)),
                 isinstance(e, ConnectionError))
            continue
        try:
            send("value", parse_reply(value).fields())  # checked here: only plain JSON crosses
        except RowFailure as e:
            send("error", str(e), e.retry)
        except (TypeError, ValueError) as e:
            send("error", f"malformed reply: {e}", False)


class _Worker:
    def __init__(self, target: str):
        self.process = subprocess.Popen([sys.executable, "-c", _BOOT, json.dumps(sys.path)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, name=f"run-rag worker {self.process.pid}", daemon=True).start()
        self._send(target)
        reply = self._replies.get()  # the import: no time limit (as the import in this process had none)
        if reply is None:
            self.kill()
            raise ConfigError(f"--target: the process importing '{target}' ended before it was ready (exit code "
                              f"{self.process.returncode})")
        if reply[0] != "ready":
            self.kill()
            raise ConfigError(reply[1])
        self.history_parameter: str | None = reply[1]

    def _read(self) -> None:
        """Each reply line onto the queue; None when the worker's output ends (it died, or was killed)."""
        try:
            for line in self.process.stdout:
                self._replies.put(json.loads(line))
        except (OSError, ValueError):
            pass
        self._replies.put(None)

    def _send(self, message: Any) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def ask(self, question: str, timeout: float, history: History | None) -> Any:
        """The function's checked reply (as a dict); RowFailure when it raised, timed out (the worker is then killed)
        or died."""
        try:
            self._send({"question": question, "history": history})
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise RowFailure(f"timed out after {seconds_text(timeout, digits=None)}; the call was stopped",
                             retry=True) from None
        except OSError:  # its input is closed: it has died
            reply = None
        if reply is None:
            self.kill()
            raise RowFailure(f"the pipeline's process ended during the call (exit code {self.process.returncode})",
                             retry=False)
        if reply[0] == "error":
            raise RowFailure(reply[1], retry=reply[2], unreachable=len(reply) > 3 and bool(reply[3]))
        return reply[1]

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Close its input (it ends); killed if it has not within _STOP_SECONDS."""
        try:
            self.process.stdin.close()
            self.process.wait(_STOP_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass


class ProcessTarget:
    """A Python function named 'module:function' or 'file.py:function', run in worker processes (see the module's
    docstring). The first worker is started here, so a target that cannot be imported is a ConfigError before any
    row is asked; close() ends them all (also at exit)."""

    def __init__(self, target: str):
        check_target(target)
        self.name = target
        self._target = target
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        first = _Worker(target)
        self.history_parameter = first.history_parameter
        self._idle.append(first)
        _LIVE.add(self)

    def __call__(self, question: str, row_id: str, timeout: float, history: History | None = None) -> Any:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self._target)  # one per call in flight; a new one after a timeout
        try:
            value = worker.ask(question, timeout, history)
        except RowFailure:
            if worker.alive():
                self._give_back(worker)  # the function raised: the worker is fine
            raise
        except BaseException:
            worker.kill()
            raise
        self._give_back(worker)
        return value

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def close(self) -> None:
        with self._lock:
            workers, self._idle = self._idle, []
        for w in workers:
            w.stop()

    def __enter__(self) -> "ProcessTarget":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@atexit.register
def _close_all() -> None:  # a run stopped by an error or Ctrl-C leaves no worker behind
    for target in list(_LIVE):
        target.close()
