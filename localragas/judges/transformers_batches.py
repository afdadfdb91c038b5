"""The transformers judge's batching: calls from any thread (`eval --concurrency N`) and the prompts of
`generate_many` run together, up to `batch_size` rows per model.generate, one batch at a time."""
from __future__ import annotations

import threading
from typing import Callable, Sequence

from ..core.errors import JudgeError
from ..core.reply_schemas import Output
from ..prompts import Prompt
from .base import Completion

Rows = Sequence[tuple[Prompt, type[Output]]]


class _Request:
    """One queued call: the prompt, its output type, and (once done) its Completion or exception."""

    def __init__(self, prompt: Prompt, output: type[Output]):
        self.prompt, self.output = prompt, output
        self.result: Completion | BaseException | None = None
        self.done = threading.Event()


class Batches:
    """`run(rows)` answers one batch (one model.generate); `key(prompt, output)` is a call's cache key."""

    def __init__(self, run: Callable[[Rows], list[Completion]], key: Callable[[Prompt, type[Output]], str],
                 batch_size: int):
        self._run, self._key, self.batch_size = run, key, batch_size
        self.lock = threading.Lock()  # one model call at a time
        self.waiting: list[_Request] = []  # calls waiting for the model, from any thread
        self._waiting_lock = threading.Lock()
        self._planned: dict[str, list[tuple[str, Prompt]]] = {}  # generate_many: cache key -> its batch
        self._pending: dict[str, Completion] = {}  # replies of a batch already run, not yet taken

    def plan(self, items: list[tuple[str, Prompt]]) -> None:
        """generate_many: the uncached (cache key, prompt) pairs, cut into batches; the first call of a batch
        runs the whole batch."""
        with self.lock:
            for i in range(0, len(items), self.batch_size):
                chunk = items[i:i + self.batch_size]
                self._planned.update({k: chunk for k, _ in chunk})

    def unplan(self) -> None:
        with self.lock:
            self._planned.clear()
            self._pending.clear()

    def complete(self, prompt: Prompt, output: type[Output]) -> Completion:
        """The call's Completion: from its planned batch, or queued with the calls of other threads."""
        if self._planned:
            with self.lock:
                key = self._key(prompt, output)
                if key in self._pending:
                    return self._pending.pop(key)
                if key in self._planned:
                    chunk = self._planned[key]
                    try:
                        completions = self._run([(p, output) for _, p in chunk])
                    except JudgeError:
                        for k, _ in chunk:
                            self._planned.pop(k, None)  # each is then run alone and records its own error
                    else:
                        for (k, _), c in zip(chunk, completions):
                            self._planned.pop(k, None)
                            self._pending[k] = c
                        return self._pending.pop(key)
        return self._submit(prompt, output)

    def _submit(self, prompt: Prompt, output: type[Output]) -> Completion:
        """Queue the call; whichever waiting thread gets the model runs the queued calls as one batch."""
        req = _Request(prompt, output)
        with self._waiting_lock:
            self.waiting.append(req)
        while not req.done.is_set():
            if not self.lock.acquire(blocking=False):
                req.done.wait(0.002)
                continue
            try:
                with self._waiting_lock:
                    batch = self.waiting[:self.batch_size]
                    del self.waiting[:len(batch)]
                if batch:
                    self._serve(batch)
            finally:
                self.lock.release()
        if isinstance(req.result, BaseException):
            raise req.result
        return req.result

    def _serve(self, batch: list[_Request]) -> None:
        try:
            try:
                results: list = self._run([(r.prompt, r.output) for r in batch])
            except JudgeError as e:
                if len(batch) == 1:
                    results = [e]
                else:  # one prompt too long for the context: each alone, for its own reply or error
                    results = []
                    for r in batch:
                        try:
                            results.append(self._run([(r.prompt, r.output)])[0])
                        except JudgeError as e1:
                            results.append(e1)
            for r, res in zip(batch, results):
                r.result = res
        except Exception as e:  # noqa: BLE001 - a load or runtime error reaches every waiting caller
            for r in batch:
                r.result = e
        finally:
            for r in batch:
                if r.result is None:  # interrupted (KeyboardInterrupt): no caller waits forever
                    r.result = JudgeError(f"{r.prompt.name}: the judge call was interrupted")
                r.done.set()
