"""`localragas run-rag` as a library call: the user's pipeline (localragas.testset.rag_targets) asked every
question of a test set, a bounded number at once, and each row written back with its answer and contexts, or with
`rag_error`.

    run = run_rag(RagRunSpec("testset.jsonl", target="examples/toy_rag.py:answer"))
    run.write("filled.jsonl")    # run.failed: the rows whose call failed

A row may instead be a conversation (testset/chat_script.py: `messages` in the chat format, or `turns`): its user
turns are asked one after the other, each with the conversation so far (a Python function by its `history` parameter,
an HTTP endpoint in the body's `history`), and the row written back in the chat format, each reply with its contexts.
A question row with `history` (a turn row: the
turn's earlier messages, data/chat_messages.py) is asked with that history. Conversations and turn rows are asked of
a pipeline that takes a history only (a ConfigError before any call otherwise); one
conversation at a time per `concurrency` slot, its turns in order.

A Python function runs in worker processes (localragas.testset.rag_worker): a call past the timeout is stopped, its
worker killed and replaced, and the row says "timed out after N s; the call was stopped". An HTTP endpoint's timeout
is a deadline for the whole request.

A failed row or turn (after `retries` retries with backoff for a timeout, a connection error or a 5xx) keeps its place with
`"answer": ""`, `"contexts": []` and `"rag_error": "<why>"`; `localragas eval` refuses such a row (skipped with that
reason under --skip-invalid), so a failed call is never scored. The other rows are never lost to it. A conversation
stops at its failed turn: the turns before it keep their replies, the row its `rag_error` naming the turn.

A pipeline that cannot be reached (`max_connection_failures` rows in a row failed to connect, after their retries)
stops the run: no further question is asked, `RagRun.stopped` says why, and the rows done so far are kept.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.chat_messages import turn_of
from ..data.dataset import read_records
from ..data.sample_record import RAG_ERROR_FIELD as ERROR_FIELD, content_id, unicode_problem
from ..core.errors import ConfigError, DatasetError
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES
from .chat_script import Script, is_script, read_script
from .frameworks import framework_pipeline
from .rag_targets import CallableTarget, History, HttpTarget, RagReply, RowFailure, parse_reply
from .rag_worker import ProcessTarget, importable_name
from ..data.schema import FIELD_ALIASES, field_names

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
BACKOFF_SECONDS = 0.5  # before retry n: BACKOFF_SECONDS * 2 ** (n - 1)
DEFAULT_MAX_CONNECTION_FAILURES = 5  # consecutive rows that could not connect before the run stops (0: never)
_FILLED = ("answer", "contexts", "retrieved_context_ids")  # written by the run: their other names are dropped


@dataclass(frozen=True)
class RagRunSpec:
    data: Path
    target: Any = None  # 'module:function', 'file.py:function', a function, a LangChain runnable, a LlamaIndex engine
    url: str | None = None
    concurrency: int = 1
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = BACKOFF_SECONDS
    progress: bool | None = None
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_connection_failures: int = DEFAULT_MAX_CONNECTION_FAILURES

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", Path(self.data))
        if (self.target is None) == (self.url is None):
            raise ConfigError("give one of --target (a Python function) and --url (an HTTP endpoint)")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"--concurrency must be a whole number >= 1, not {self.concurrency!r}")
        if not self.timeout > 0:
            raise ConfigError(f"--timeout must be > 0 seconds, not {self.timeout!r}")
        if not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError(f"--retries must be a whole number >= 0, not {self.retries!r}")
        if not isinstance(self.max_connection_failures, int) or self.max_connection_failures < 0:
            raise ConfigError("--max-connection-failures must be a whole number >= 0, "
                              f"not {self.max_connection_failures!r}")

    def files_read(self) -> list[tuple[Path, str]]:
        """What the run reads besides the test set (for the output guard): a --target given as a file's path."""
        where = self.target.rpartition(":")[0] if isinstance(self.target, str) else ""
        return [(Path(where), "the --target pipeline's file")] if where.endswith(".py") else []

    def pipeline(self):
        """The pipeline to ask: an HTTP endpoint; a function named 'module:function' or 'file.py:function' (or given
        as one a worker can import by that name), run in worker processes so that a call past the timeout is
        stopped (rag_worker.ProcessTarget); any other function given in Python, in a thread (CallableTarget: a call
        past the timeout is left running)."""
        if self.url is not None:
            return HttpTarget(self.url)
        if isinstance(self.target, str):
            return ProcessTarget(self.target)
        chain = framework_pipeline(self.target)  # a LangChain runnable or a LlamaIndex query engine, in a thread
        if chain is not None:
            return CallableTarget(chain)
        name = importable_name(self.target)
        return ProcessTarget(name) if name is not None else CallableTarget(self.target)


@dataclass
class RagRun:
    rows: list[dict[str, Any]]  # the rows done (answered or failed), in input order
    failed: list[tuple[str, str]] = field(default_factory=list)  # (row id, why)
    stopped: str | None = None  # why the run stopped before asking every row (the pipeline could not be reached)
    not_asked: int = 0  # rows left out of `rows` because the run stopped

    def write(self, out: str | Path) -> None:
        from ..core.atomic_write import write_atomic  # noqa: PLC0415

        write_atomic(out, (_line(r) for r in self.rows))


def _line(row: dict[str, Any]) -> str:
    """A row as a JSON line: its text as it is, or, for a row of the test set holding a lone surrogate (JSON's
    "\\ud800", which no UTF-8 file can hold as a character), escaped as the test set gave it: the file is always
    written, and `eval` names such a row."""
    text = json.dumps(row, ensure_ascii=False)
    return (text if unicode_problem(text) is None else json.dumps(row)) + "\n"


Question = tuple[str, str, dict[str, Any], History | None]  # (id, question, record, a turn row's history)


def read_questions(spec: RagRunSpec) -> list[Question | Script]:
    """Each row: (id, question, record, its history when it is a turn row), or a conversation's Script
    (testset/chat_script.py); a row without a question is refused (DatasetError naming it), as is a bad conversation
    or history (naming its message and field)."""
    shown = str(spec.data)
    out: list[Question | Script] = []
    seen: dict[str, int | None] = {}
    for line, record in read_records(spec.data, spec.max_input_bytes):
        if not isinstance(record, dict):
            raise DatasetError(shown, line, None, f"expected an object, got {type(record).__name__}")
        item: Question | Script
        if is_script(record):
            item = read_script(record, shown, line)
            row_id = item.id
        else:
            names = field_names(record, "question")
            question = record.get(names[0]) if names else None
            if not isinstance(question, str) or not question.strip():
                raise DatasetError(shown, line, names[0] if names else "question", "expected a non-empty string")
            raw_id = record.get("id")
            given = str(raw_id).strip() if isinstance(raw_id, (str, int)) else ""
            row_id = given or content_id(question)
            item = (row_id, question, record, _history(record, question, shown, line))
        if row_id in seen:
            raise DatasetError(shown, line, "id", f"duplicate id '{row_id}' (first used on line {seen[row_id]})")
        seen[row_id] = line
        out.append(item)
    if not out:
        raise DatasetError(shown, None, None, "no rows")
    return out


def ask(pipeline, question: str, row_id: str, spec: RagRunSpec, sleep: Callable[[float], None] = time.sleep,
        history: History | None = None) -> RagReply:
    """The pipeline's checked reply, retried up to spec.retries times when worth it; RowFailure when it fails, also
    when handling the reply raised (whatever one reply does, it is that row's or turn's failure)."""
    for attempt in range(spec.retries + 1):
        try:
            return parse_reply(pipeline(question, row_id, spec.timeout, history))
        except RowFailure as e:
            if not e.retry or attempt == spec.retries:
                tries = f" (after {attempt + 1} tries)" if attempt else ""
                raise RowFailure(f"{e}{tries}", e.retry, e.unreachable) from None
            sleep(spec.backoff * 2 ** attempt)
        except Exception as e:  # noqa: BLE001 - a str subclass that raises, a reply that exhausts memory
            raise RowFailure(f"could not handle the pipeline's reply: {type(e).__name__}: {e}", retry=False) from None
    raise AssertionError("unreachable")


def _history(record: dict[str, Any], question: str, path: str, line: int | None) -> History | None:
    """A turn row's earlier messages (checked, as eval checks them) as the pipeline is given them: system, user and
    assistant messages with text; None for a row without `history`."""
    turn = turn_of(record, question, path, line)
    if turn is None:
        return None
    return [{"role": m.role, "content": m.content} for m in turn.history if m.role != "tool" and m.content.strip()]


def check_history(pipeline, rows: list[Question | Script]) -> None:
    """A test set with conversations (or turn rows) is asked only of a pipeline that takes their history
    (ConfigError otherwise: its follow-ups would be asked without what came before)."""
    chat = next((_row_id(r) for r in rows if isinstance(r, Script) or r[3] is not None), None)
    if chat is not None and pipeline.history_parameter is None:
        raise ConfigError(f"the test set holds conversations (first: '{chat}'), but {pipeline.name} takes no "
                          "history, so its follow-up questions would be asked without the conversation before them: "
                          "give a function with a `history` parameter (fn(question, history) gets [{'role', "
                          "'content'}, ...]), a LangChain chain whose input has `chat_history`, or a LlamaIndex chat "
                          "engine (index.as_chat_engine())")


def _row_id(item: Question | Script) -> str:
    return item.id if isinstance(item, Script) else item[0]


def _filled(record: dict[str, Any], row_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    drop = {n for f in _FILLED for n in (f, *FIELD_ALIASES[f])} | {ERROR_FIELD}
    return {**{k: v for k, v in record.items() if k not in drop}, "id": row_id, **fields}


def run_rag(spec: RagRunSpec) -> RagRun:
    """Ask every question of spec.data; the rows in input order, each filled or with its rag_error."""
    from ..run.progress import progress_for  # noqa: PLC0415

    rows = read_questions(spec)
    pipeline = spec.pipeline()
    out: list[dict[str, Any] | None] = [None] * len(rows)
    failed: dict[int, tuple[str, str]] = {}
    unreachable = _Unreachable(spec.max_connection_failures)

    def one(i: int) -> None:
        if unreachable.stopped:
            return  # not asked: the row is left out
        item = rows[i]
        if isinstance(item, Script):
            out[i], failure = item.run(lambda q, turn, history: ask(pipeline, q, turn, spec, history=history))
            if failure is not None:
                failed[i] = (item.id, str(failure))
            unreachable.count(failure)
            return
        row_id, question, record, history = item
        try:
            out[i] = _filled(record, row_id, ask(pipeline, question, row_id, spec, history=history).fields())
            unreachable.count(None)
        except RowFailure as e:  # that row's failure: the other rows are asked and written all the same
            failed[i] = (row_id, str(e))
            out[i] = _filled(record, row_id, {"answer": "", "contexts": [], ERROR_FIELD: str(e)})
            unreachable.count(e)

    try:
        check_history(pipeline, rows)
        with progress_for(len(rows), spec.progress, unit="rows", verb="asking") as bar, \
                ThreadPoolExecutor(spec.concurrency, thread_name_prefix="run-rag") as pool:
            futures = {pool.submit(one, i): i for i in range(len(rows))}
            for f in as_completed(futures):
                f.result()
                bar.advance(_row_id(rows[futures[f]]))
    finally:
        if isinstance(pipeline, ProcessTarget):
            pipeline.close()  # its worker processes end with the run
    done = [r for r in out if r is not None]
    return RagRun(done, [failed[i] for i in sorted(failed)], unreachable.stopped, len(rows) - len(done))


class _Unreachable:
    """Consecutive rows whose call could not connect: at `limit` (0: never) the run is stopped, with why."""

    def __init__(self, limit: int):
        self.limit, self.streak = limit, 0
        self.stopped: str | None = None
        self._lock = threading.Lock()

    def count(self, failure: RowFailure | None) -> None:
        with self._lock:
            self.streak = self.streak + 1 if failure is not None and failure.unreachable else 0
            if self.limit and self.streak >= self.limit and self.stopped is None:
                self.stopped = (f"stopped after {self.streak} rows in a row could not reach the pipeline "
                                f"(last: {failure})")
