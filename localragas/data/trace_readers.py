"""Samples from traces: OpenTelemetry spans exported as JSON, with the OpenInference attributes a RAG pipeline's
instrumentation sets, one sample per trace. So production traffic can be scored offline.

Files (.json, .jsonl or .ndjson; told from a sample file by their first object, looks_like_spans):
- OTLP JSON: objects {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}, one per file or one per line (the
  OpenTelemetry Collector's file exporter; protobuf's MessageToJson of an ExportTraceServiceRequest); ids in hex or
  base64, attribute values typed ({"stringValue": ...}, arrays, key-value lists).
- The OpenTelemetry SDK's own span JSON (`ReadableSpan.to_json()`: what ConsoleSpanExporter writes, one indented
  object after another, or one a line with a JSON-lines formatter; a JSON list of them): {"name", "context":
  {"trace_id", "span_id"}, "parent_id", "start_time", "end_time", "attributes": {...}}.

A trace's sample (OpenInference semantic conventions; nested attribute values are read as their dotted names):
- contexts: `retrieval.documents.N.document.content` of its RETRIEVER spans (`openinference.span.kind`), in the order
  they started, each document's `document.id` as retrieved_context_ids when every document has one; when a RERANKER
  span gives `reranker.output_documents.N.document.content`, the last reranker's documents (what the LLM was shown).
- answer: the last LLM span to end: its last `llm.output_messages.N.message.content`, else its `output.value`;
  without an LLM span, the root span's `output.value`.
- question: the root span's `input.value`, else the first RETRIEVER span's `input.value` (a JSON input.value gives its
  `question`, `input` or `query`).
- id: the trace id (32 hex digits).

A chat session: the traces whose spans carry one session id (SESSION_KEYS: OpenInference's `session.id`, OTel GenAI's
`gen_ai.conversation.id`, Langfuse's, OpenLLMetry's and LangSmith's names for it) are one conversation row
({"id": the session id, "messages": [...]}, read by data/conversations.py), each trace one turn in the order the traces
started: its question the user's message, its answer the reply, its documents the turn's contexts. A trace without a
session id stays one sample. A session with an incomplete trace is refused whole, naming the session and the trace
(with skip_invalid, skipped whole: its other turns' history would lack that exchange).

A trace without a retrieval span, an answer or a question is refused, naming the file, the trace, the span and the
attribute missing: it fails closed, as a bad row of a sample file does (a silently dropped trace would leave the
traffic it stands for unscored, e.g. every request whose retriever failed); with skip_invalid (`--skip-invalid`) it
is counted in the report's skipped rows with that reason. A span the file cannot give (not a span, no trace or span
id, invalid JSON, a list of resources, scopes or spans that is not a list of objects) is an error of the file, naming
the place (`resourceSpans[0].scopeSpans[0].spans`), with skip_invalid too: which trace it belonged to is unknown. A
span of a known trace whose attributes the file cannot give (not a list of {"key", "value"} objects; not an object in
the SDK's JSON; a value that is no OTLP AnyValue) makes its whole trace refused, naming the span and the place: with
skip_invalid, skipped as an incomplete trace is (never scored without that span).
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import DatasetError
from .text_readers import Record, read_text

SPAN_KIND = "openinference.span.kind"
# The attributes that name a span's chat session, the first found winning (an explicit `session.id` wins, as
# OpenInference's mapping of gen_ai.conversation.id says).
SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "langfuse.session.id",
                "traceloop.association.properties.session_id", "traceloop.association.properties.conversation_id",
                "langsmith.metadata.session_id", "langsmith.metadata.thread_id",
                "langsmith.metadata.conversation_id")
_HEAD_BYTES = 1 << 16
_OTLP_START = re.compile(r'^\s*\[?\s*\{\s*"(resourceSpans|resource_spans)"\s*:')
_SDK_SPAN = re.compile(r'"context"\s*:\s*\{\s*"trace_id"\s*:')
_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r\ufeff]*")
_DOCUMENT = re.compile(r"^(retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\.(content|id)$")
_MESSAGE = re.compile(r"^llm\.output_messages\.(\d+)\.message\.content$")
_QUESTION_KEYS = ("question", "input", "query")
_INT = re.compile(r"\s*-?\d{1,40}\s*")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    line: int
    error: DatasetError | None = None  # attributes the file cannot give: the trace is refused

    def kind(self) -> str:
        return str(self.attributes.get(SPAN_KIND, "")).upper()

    def where(self) -> str:
        return f"span '{self.name}' ({self.span_id})"


def looks_like_spans(path: Path) -> bool:
    """A file of spans: its first object starts with "resourceSpans" (OTLP), or an SDK span's "context": {"trace_id"
    is near its start. A sample file has neither. Read after core.inputs.check_input, so never a FIFO or a device."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:  # the sample readers say what is wrong with the path
        return False
    return bool(_OTLP_START.match(head) or _SDK_SPAN.search(head[:4096]))


def trace_records(path: Path, shown: str, limit: int) -> Iterator[Record]:
    """One record (or the DatasetError of an incomplete trace) per trace, and one conversation row per chat session
    (its traces' records as turns), in the order their first spans appear."""
    traces: dict[str, list[Span]] = {}
    for span in _spans(read_text(path, shown, limit), shown):
        traces.setdefault(span.trace_id, []).append(span)
    if not traces:
        raise DatasetError(shown, None, None, "no spans")
    groups: dict[tuple[str, str], list[str]] = {}  # ("session", id) or ("trace", id) -> its traces
    for trace_id, spans in traces.items():
        session = _session(spans)
        groups.setdefault(("session", session) if session else ("trace", trace_id), []).append(trace_id)
    for (kind, name), trace_ids in groups.items():
        line = min(s.line for t in trace_ids for s in traces[t])
        try:
            if kind == "trace":  # no session: the trace's own sample
                yield line, _trace_record(name, traces[name], shown)
            else:
                yield line, _session_record(name, [traces[t] for t in trace_ids], shown)
        except DatasetError as e:
            yield line, e


def _trace_record(trace_id: str, spans: list[Span], shown: str) -> dict[str, Any]:
    line = min(s.line for s in spans)
    bad = next((s.error for s in spans if s.error is not None), None)
    if bad is not None:
        raise bad
    return _record(trace_id, spans, shown, line)


def _session(spans: list[Span]) -> str | None:
    """The chat session the trace belongs to: the first SESSION_KEYS attribute any of its spans gives."""
    for key in SESSION_KEYS:
        for span in spans:
            value = span.attributes.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
    return None


def _session_record(session: str, traces: list[list[Span]], shown: str) -> dict[str, Any]:
    """A chat session's traces as a conversation row: each trace a user message and the reply, with its contexts."""
    messages: list[dict[str, Any]] = []
    for spans in sorted(traces, key=lambda t: min(s.start for s in t)):
        try:
            turn = _trace_record(spans[0].trace_id, spans, shown)
        except DatasetError as e:
            raise DatasetError(e.path, e.line, e.field, f"session {session!r}: {e.detail}") from None
        messages.append({"role": "user", "content": turn["question"]})
        messages.append({"role": "assistant", "content": turn["answer"],
                         **{k: v for k, v in turn.items() if k in ("contexts", "retrieved_context_ids")}})
    return {"id": session, "messages": messages}


def _values(text: str, shown: str) -> Iterator[tuple[int, Any]]:
    """(line, value) of each JSON value of the text: one document, JSON lines, or indented objects one after
    another."""
    at, line = 0, 1
    while True:
        start = _skip_ws(text, at)
        line += text.count("\n", at, start)
        if start >= len(text):
            return
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as e:
            raise DatasetError(shown, text.count("\n", 0, e.pos) + 1, None, f"invalid JSON: {e.msg}") from None
        except RecursionError:
            raise DatasetError(shown, line, None, "invalid JSON: nested too deeply") from None
        yield line, value
        line += text.count("\n", start, end)
        at = end


def _skip_ws(text: str, at: int) -> int:
    ws = _WS.match(text, at)
    return ws.end() if ws else at


def _spans(text: str, shown: str) -> Iterator[Span]:
    for line, value in _values(text, shown):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, Mapping) and ("resourceSpans" in item or "resource_spans" in item):
                yield from _otlp_spans(item, shown, line)
            elif isinstance(item, Mapping) and isinstance(item.get("context"), Mapping):
                yield _sdk_span(item, shown, line)
            else:
                raise DatasetError(shown, line, None, "expected an OpenTelemetry span (an object with 'context': "
                                   "{'trace_id', 'span_id'}) or OTLP JSON (an object with 'resourceSpans'), got "
                                   f"{type(item).__name__}")


def _hex_id(value: Any, shown: str, line: int, name: str) -> str:
    """A trace or span id as lower-case hex: '0x…' (the SDK), hex (OTLP JSON) or base64 (protobuf's JSON)."""
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(shown, line, name, f"expected the span's {name.split('.')[-1]} as a string")
    value = value.strip()
    bare = value.removeprefix("0x")  # only when hex follows: a base64 id may itself begin with "0x"
    if re.fullmatch(r"[0-9a-fA-F]+", bare) and len(bare) in (16, 32):
        return bare.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) not in (8, 16):  # a span id is 8 bytes, a trace id 16
        raise DatasetError(shown, line, name, f"'{value[:40]}' is neither hex nor base64 of an 8- or 16-byte id")
    return raw.hex()


def _time(value: Any) -> int:
    """Nanoseconds since the epoch, for ordering: OTLP's integer (or its string), the SDK's ISO 8601 text."""
    if isinstance(value, int) or isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            pass
    return 0


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Nested attribute values (a list of documents, a key-value list) under their dotted names, as OpenInference
    flattens them: {"retrieval.documents": [{"document.content": "a"}]} -> "retrieval.documents.0.document.content"."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
        for i, v in enumerate(value):
            _flat(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def _json_kind(value: Any) -> str:
    """A value's kind in JSON's words, for errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "a list" if isinstance(value, list) else "an object"


def _objects(value: Any, shown: str, line: int, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(place, object) of each item of a list of objects at `where` (null or absent: none); anything else is an error
    naming the place."""
    if value is None:
        return
    if not isinstance(value, list):
        raise DatasetError(shown, line, where, f"expected a list of objects, got {_json_kind(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise DatasetError(shown, line, f"{where}[{i}]", f"expected an object, got {_json_kind(item)}")
        yield f"{where}[{i}]", item


def _otlp_value(value: Any, shown: str, line: int, where: str) -> Any:
    """An OTLP AnyValue as plain Python (null: None; a plain JSON value as it is)."""
    if not isinstance(value, Mapping):
        return value
    if "arrayValue" in value:
        at = f"{where}.arrayValue"
        return [_otlp_value(v, shown, line, f"{at}.values[{i}]")
                for i, v in enumerate(_listed(value["arrayValue"], shown, line, at))]
    if "kvlistValue" in value:
        at = f"{where}.kvlistValue"
        return dict(_key_values(_listed(value["kvlistValue"], shown, line, at), shown, line, f"{at}.values"))
    if "intValue" in value:
        number = value["intValue"]  # protobuf's JSON writes an int64 as a string
        if isinstance(number, str) and _INT.fullmatch(number) or isinstance(number, float) and number.is_integer():
            return int(number)
        if isinstance(number, int) and not isinstance(number, bool):
            return number
        raise DatasetError(shown, line, f"{where}.intValue", f"expected an integer, got {_json_kind(number)}")
    for kind in ("stringValue", "doubleValue", "boolValue", "bytesValue"):
        if kind in value:
            return value[kind]
    return None


def _listed(holder: Any, shown: str, line: int, where: str) -> list[Any]:
    """The "values" of an arrayValue or kvlistValue ({"values": [...]}; null: none)."""
    if holder is None:
        return []
    if not isinstance(holder, Mapping):
        raise DatasetError(shown, line, where, f"expected an object with 'values', got {_json_kind(holder)}")
    values = holder.get("values")
    if values is not None and not isinstance(values, list):
        raise DatasetError(shown, line, f"{where}.values", f"expected a list, got {_json_kind(values)}")
    return values or []


def _key_values(items: Any, shown: str, line: int, where: str) -> Iterator[tuple[str, Any]]:
    """(key, value) of OTLP KeyValues ([{"key": ..., "value": AnyValue}]): a span's attributes, a kvlistValue."""
    for at, kv in _objects(items, shown, line, where):
        key = kv.get("key")
        if not isinstance(key, str):
            raise DatasetError(shown, line, f"{at}.key", f"expected the attribute's name as a string, got "
                                                         f"{_json_kind(key)}")
        try:
            yield key, _otlp_value(kv.get("value"), shown, line, f"{at}.value")
        except DatasetError as e:
            raise DatasetError(shown, line, e.field, f"attribute '{key[:60]}': {e.detail}") from None


def _otlp_attributes(items: Any, shown: str, line: int, where: str) -> dict[str, Any]:
    return dict(_key_values(items, shown, line, where))


def _read_attributes(span: Span, read: Callable[[], dict[str, Any]], shown: str) -> Span:
    """The span with its attributes read by `read()`, flattened; attributes the file cannot give make the span's
    error, said of its trace and span."""
    try:
        span.attributes = _flat(read(), "", {})
        return span
    except DatasetError as e:
        field, detail = e.field, e.detail
    except RecursionError:
        field, detail = "attributes", "nested too deeply"
    span.error = DatasetError(shown, span.line, field, f"trace {span.trace_id}: {span.where()}: {detail} "
                                                       "(--skip-invalid counts the trace skipped)")
    return span


def _otlp_spans(doc: Mapping[str, Any], shown: str, line: int) -> Iterator[Span]:
    top = "resourceSpans" if "resourceSpans" in doc else "resource_spans"  # the file has one of them (_spans)
    for r_at, resource in _objects(doc.get(top), shown, line, top):
        inner = "scopeSpans" if resource.get("scopeSpans") or "instrumentationLibrarySpans" not in resource else \
            "instrumentationLibrarySpans"
        for s_at, scope in _objects(resource.get(inner), shown, line, f"{r_at}.{inner}"):
            for at, raw in _objects(scope.get("spans"), shown, line, f"{s_at}.spans"):
                parent = raw.get("parentSpanId")
                span = Span(_hex_id(raw.get("traceId"), shown, line, f"{at}.traceId"),
                            _hex_id(raw.get("spanId"), shown, line, f"{at}.spanId"),
                            _hex_id(parent, shown, line, f"{at}.parentSpanId") if parent else None,
                            str(raw.get("name") or ""), _time(raw.get("startTimeUnixNano")), _time(raw.get("endTimeUnixNano")), {},
                            line)
                yield _read_attributes(span, partial(_otlp_attributes, raw.get("attributes"), shown, line,
                                                     f"{at}.attributes"), shown)


def _sdk_span(raw: Mapping[str, Any], shown: str, line: int) -> Span:
    context, parent = raw["context"], raw.get("parent_id")
    span = Span(_hex_id(context.get("trace_id"), shown, line, "context.trace_id"),
                _hex_id(context.get("span_id"), shown, line, "context.span_id"),
                _hex_id(parent, shown, line, "parent_id") if parent else None, str(raw.get("name") or ""),
                _time(raw.get("start_time")), _time(raw.get("end_time")), {}, line)

    def attributes() -> dict[str, Any]:
        given = raw.get("attributes")
        if given is not None and not isinstance(given, Mapping):
            raise DatasetError(shown, line, "attributes", f"expected an object, got {_json_kind(given)}")
        return dict(given or {})

    return _read_attributes(span, attributes, shown)



def _record(trace_id: str, spans: list[Span], shown: str, line: int) -> dict[str, Any]:
    ids = {s.span_id for s in spans}
    roots = sorted((s for s in spans if s.parent_id is None or s.parent_id not in ids), key=lambda s: s.start)
    retrievers = sorted((s for s in spans if s.kind() == "RETRIEVER"), key=lambda s: s.start)
    rerankers = sorted((s for s in spans if s.kind() == "RERANKER"), key=lambda s: s.end)
    llms = sorted((s for s in spans if s.kind() == "LLM"), key=lambda s: s.end)

    def missing(field: str, message: str) -> DatasetError:
        return DatasetError(shown, line, field, f"trace {trace_id}: {message}")

    if not retrievers:
        named = ", ".join(f"'{s.name}' ({s.kind() or 'no kind'})" for s in spans[:5]) + (" ..." if len(spans) > 5 else "")
        raise missing("contexts", f"no RETRIEVER span ('{SPAN_KIND}': RETRIEVER) among its {len(spans)} spans "
                                  f"({named}), so nothing retrieved to score (--skip-invalid counts such a trace "
                                  "skipped)")
    reranked = [s for s in rerankers if any(k.startswith("reranker.output_documents.") for k in s.attributes)]
    documents = _documents(reranked[-1], "reranker.output_documents", missing) if reranked else \
        [d for s in retrievers for d in _documents(s, "retrieval.documents", missing)]
    record: dict[str, Any] = {"id": trace_id, "contexts": [text for text, _ in documents]}
    if documents and all(i is not None for _, i in documents):
        record["retrieved_context_ids"] = [str(i) for _, i in documents]
    question = next((q for q in (_text(s, "input") for s in [*roots, retrievers[0]]) if q), None)
    if question is None:
        raise missing("question", f"no question: neither the root span nor the first RETRIEVER span "
                                  f"({retrievers[0].where()}) has a text 'input.value'")
    record["question"] = question
    answer = _llm_answer(llms[-1]) if llms else next((a for a in (_text(s, "output") for s in roots) if a), None)
    if answer is None:
        where = f"its last LLM span, {llms[-1].where()}, has" if llms else "it has no LLM span and its root span has"
        raise missing("answer", f"no answer: {where} no 'llm.output_messages.N.message.content' or text "
                                "'output.value'")
    record["answer"] = answer
    return record


def _documents(span: Span, prefix: str, missing) -> list[tuple[str, Any]]:
    """(content, id) of the span's documents, by their index N."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        m = _DOCUMENT.match(key)
        if m and m.group(1) == prefix:
            found.setdefault(int(m.group(2)), {})[m.group(3)] = value
    out = []
    for n in sorted(found):
        content = found[n].get("content")
        if not isinstance(content, str):
            raise missing("contexts", f"{span.where()}: document {n} has no text '{prefix}.{n}.document.content'")
        out.append((content, found[n].get("id")))
    return out


def _text(span: Span, side: str) -> str | None:
    """The span's `input.value` / `output.value` as text: a JSON value (`input.mime_type`: application/json, or an
    object) gives its question, input, query or answer."""
    value = span.attributes.get(f"{side}.value")
    if not isinstance(value, str) or not value.strip():
        return None
    if span.attributes.get(f"{side}.mime_type") != "application/json" and not value.lstrip().startswith("{"):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    if isinstance(parsed, str):
        return parsed or None
    keys = _QUESTION_KEYS if side == "input" else ("answer", "output", "result", "content", "text")
    if isinstance(parsed, Mapping):
        return next((parsed[k] for k in keys if isinstance(parsed.get(k), str) and parsed[k].strip()), None)
    return None


def _llm_answer(span: Span) -> str | None:
    messages = sorted((int(m.group(1)), v) for k, v in span.attributes.items() if (m := _MESSAGE.match(k)))
    texts = [v for _, v in messages if isinstance(v, str) and v.strip()]
    return texts[-1] if texts else _text(span, "output")
