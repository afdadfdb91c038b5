"""A JSON report read as it streams: every part but the samples decoded whole (they are small), the samples one at a
time into a run's results (run/results.py: in a list, on disk past SPILL_AFTER), so a report of a million samples
is read in bounded memory (`localragas report`, `merge`). A report written with --ragas-names is read whole
(read_json), its metrics renamed back.
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, Iterator, TextIO

from pydantic import ValidationError

from ..core.errors import LocalragasError
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES, check_input, failing, open_input
from ..data.schema import Report, SampleResult
from ..run.results import RunResults
from .json_report import REPORT_LIMIT_HINT, read_json

_CHUNK = 1 << 20  # characters read at a time
_SPACE = re.compile(r"[ \t\n\r]*")


class _Tokens:
    """JSON values read one at a time from a text file, the buffer holding about one value."""

    def __init__(self, f: TextIO, where: str):
        self.f, self.where = f, where
        self.buf, self.pos, self.eof = "", 0, False
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        chunk = self.f.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True

    def peek(self) -> str:
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or not self._more():
                return self.buf[self.pos:self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise LocalragasError(f"{self.where}: not a localragas JSON report: expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                if self._more():
                    continue
                raise LocalragasError(f"{self.where}: not valid JSON: {e}") from None
            if end == len(self.buf) and not self.eof and self._more():  # a number may go on in the next chunk
                continue
            self.pos = end
            return value

    def items(self) -> Iterator[Any]:
        """The values of the array that starts here."""
        self.expect("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("]")
            return


def stream_json(path: str | Path, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> Report:
    """read_json's report, its samples read one at a time into a run's results (on disk for a large report). A file
    it cannot read is left to read_json, whose error says why."""
    path = Path(path)
    check_input(path, max_input_bytes, failing(path), hint=REPORT_LIMIT_HINT)
    try:
        return _streamed(path, max_input_bytes)
    except (LocalragasError, UnicodeDecodeError, RecursionError):
        return read_json(path, max_input_bytes)


def _streamed(path: Path, max_input_bytes: int) -> Report:
    head: dict[str, Any] = {}
    results: RunResults | None = None
    with io.TextIOWrapper(open_input(path, failing(path)), encoding="utf-8") as f:
        tokens = _Tokens(f, str(path))
        tokens.expect("{")
        while tokens.peek() != "}":
            key = tokens.value()
            tokens.expect(":")
            if key == "samples" and isinstance(head.get("metrics"), list):
                if (head.get("meta") or {}).get("metric_names") == "ragas":
                    return read_json(path, max_input_bytes)  # renamed back whole (data/ragas_compat.py)
                results = RunResults(0, head["metrics"])
                for i, item in enumerate(tokens.items()):
                    results.put(i, _sample(item, path, i))
            elif key == "conversations":  # computed from the turns (data/conversation_summary.py): not kept
                for _ in tokens.items():
                    pass
            else:
                head[str(key)] = tokens.value()
            if tokens.peek() == ",":
                tokens.pos += 1
    try:
        report = Report.model_validate(head)
    except ValidationError as e:
        raise LocalragasError(f"{path}: not a localragas JSON report: {e}") from None
    if report.meta.get("metric_names") == "ragas":
        return read_json(path, max_input_bytes)
    from ..metrics.report_definitions import definitions_of  # noqa: PLC0415

    update: dict[str, Any] = {"definitions": definitions_of(report)}
    if results is not None:
        update["samples"] = results.done()
    return report.model_copy(update=update)


def _sample(item: Any, path: Path, i: int) -> SampleResult:
    try:
        return SampleResult.model_validate(item)
    except ValidationError as e:
        raise LocalragasError(f"{path}: not a localragas JSON report: samples[{i}]: {e}") from None
