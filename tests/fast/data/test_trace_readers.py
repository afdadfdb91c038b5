"""Traces in (data/trace_readers.py): spans made by the OpenTelemetry SDK itself, with the OpenInference attributes an
instrumented RAG pipeline sets, exported by the SDK's ConsoleSpanExporter to a file (indented, and one a line) and as
OTLP JSON (the SDK's OTLP encoder, protobuf's JSON; and hex ids one document a line, as the Collector writes),
read by load_samples and `localragas eval` as one sample per trace. No network."""
from __future__ import annotations

import base64
import json

import pytest

from localragas import load_samples
from localragas.core.errors import DatasetError

from cli_helpers import cli

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is not installed (pip install 'localragas[test]')")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder",
                    reason="opentelemetry-exporter-otlp-proto-common is not installed (pip install 'localragas[test]')")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

WARRANTY, RETURNS = "The warranty lasts two years.", "Returns are accepted within 30 days."


def documents(*texts_ids):
    out = {}
    for n, (text, doc_id) in enumerate(texts_ids):
        out[f"retrieval.documents.{n}.document.content"] = text
        out[f"retrieval.documents.{n}.document.id"] = doc_id
    return out


def record_traffic(exporters, unanswered=False, with_health_check=True):
    """Two RAG requests (a CHAIN root, a RETRIEVER and an LLM span each) and a health check with no RAG in it."""
    provider = TracerProvider()
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-service")
    requests = [("How long is the warranty?", [(WARRANTY, "doc-w"), (RETURNS, "doc-r")], "Two years."),
                ("Can I return it?", [(RETURNS, "doc-r")], "Within 30 days.")]
    for question, docs, answer in requests:
        with tracer.start_as_current_span("rag", attributes={"openinference.span.kind": "CHAIN",
                                                             "input.value": question, "output.value": answer}):
            with tracer.start_as_current_span("retrieve", attributes={
                    "openinference.span.kind": "RETRIEVER", "input.value": question, **documents(*docs)}):
                pass
            with tracer.start_as_current_span("llm", attributes={
                    "openinference.span.kind": "LLM",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": f"{docs}\n{question}",
                    "llm.output_messages.0.message.role": "assistant",
                    **({} if unanswered else {"llm.output_messages.0.message.content": answer})}):
                pass
    if with_health_check:
        with tracer.start_as_current_span("GET /health"):
            pass
    provider.shutdown()


def export(console=None, otlp=None, **traffic):
    """The traffic's spans written by the SDK's ConsoleSpanExporter to `console` and as OTLP JSON (the SDK's OTLP
    encoder, protobuf's JSON mapping) to `otlp`: the same spans, the same trace ids."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    memory = InMemorySpanExporter()
    with open(console or "/dev/null", "w", encoding="utf-8") as out:
        record_traffic([memory, ConsoleSpanExporter(out=out)], **traffic)
    if otlp is not None:
        otlp.write_text(MessageToJson(encode_spans(memory.get_finished_spans())), encoding="utf-8")
    return console or otlp


def expected(samples):
    return [(s.question, s.contexts, s.answer, s.retrieved_context_ids) for s in samples]


WANTED = [("How long is the warranty?", [WARRANTY, RETURNS], "Two years.", ["doc-w", "doc-r"]),
          ("Can I return it?", [RETURNS], "Within 30 days.", ["doc-r"])]


def test_the_sdks_console_export_gives_one_sample_per_trace_and_a_trace_without_retrieval_is_refused(tmp_path):
    path = export(tmp_path / "spans.json")
    with pytest.raises(DatasetError, match=r"spans.json, line \d+, field 'contexts': trace [0-9a-f]{32}: no RETRIEVER "
                                           r"span .* among its 1 spans \('GET /health' \(no kind\)\).*--skip-invalid"):
        load_samples(path)
    samples, skipped = load_samples(path, skip_invalid=True)
    assert expected(samples) == WANTED
    assert all(len(s.id) == 32 for s in samples) and len({s.id for s in samples}) == 2  # the trace ids
    assert [r.field for r in skipped] == ["contexts"] and "no RETRIEVER span" in skipped[0].reason


def test_otlp_json_of_the_same_spans_gives_the_same_samples(tmp_path):
    console, otlp = tmp_path / "console.jsonl", tmp_path / "otlp.json"
    export(console, otlp, with_health_check=False)
    assert json.loads(otlp.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]  # base64 ids
    from_otlp = load_samples(otlp)[0]
    assert expected(from_otlp) == WANTED
    # the Collector's file exporter: one OTLP document a line, ids in hex
    doc = json.loads(otlp.read_text())
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64decode(span[key]).hex()
    lines = tmp_path / "collector.jsonl"
    lines.write_text(json.dumps(doc) + "\n" + json.dumps({"resourceSpans": []}) + "\n", encoding="utf-8")
    assert [s.id for s in load_samples(lines)[0]] == [s.id for s in from_otlp]
    # the SDK's console output, renamed .jsonl, one indented object after another: read alike
    assert [s.id for s in load_samples(console)[0]] == [s.id for s in from_otlp]


def test_an_llm_span_without_output_is_refused_naming_the_trace_and_span(tmp_path):
    path = export(otlp=tmp_path / "otlp.json", unanswered=True, with_health_check=False)
    with pytest.raises(DatasetError, match=r"field 'answer': trace [0-9a-f]{32}: no answer: its last LLM span, span "
                                           r"'llm' \([0-9a-f]{16}\), has no 'llm.output_messages.N.message.content'"):
        load_samples(path)


def test_json_inputs_plain_outputs_and_a_reranker(tmp_path):
    """input.value as JSON (LangChain's instrumentation), an LLM span with output.value only, and a reranker whose
    output documents are what the LLM was shown."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("rag")
    with tracer.start_as_current_span("chain", attributes={"openinference.span.kind": "CHAIN",
                                                           "input.value": json.dumps({"question": "Warranty?"}),
                                                           "input.mime_type": "application/json"}):
        with tracer.start_as_current_span("retrieve", attributes={"openinference.span.kind": "RETRIEVER",
                                                                  **documents((RETURNS, 1), (WARRANTY, 2))}):
            pass
        with tracer.start_as_current_span("rerank", attributes={
                "openinference.span.kind": "RERANKER", "reranker.output_documents.0.document.content": WARRANTY}):
            pass
        with tracer.start_as_current_span("llm", attributes={"openinference.span.kind": "LLM",
                                                             "output.value": "Two years."}):
            pass
    provider.shutdown()
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(s.to_json(indent=None) + "\n" for s in memory.get_finished_spans()), encoding="utf-8")
    [s] = load_samples(path)[0]
    assert (s.question, s.contexts, s.answer, s.retrieved_context_ids) == ("Warranty?", [WARRANTY], "Two years.", None)


def test_a_span_file_the_reader_cannot_use_is_refused_naming_the_file_and_what_is_wrong(tmp_path):
    bad = tmp_path / "spans.json"
    bad.write_text('{"name": "x", "context": {"trace_id": "0x12", "span_id": "0xab"}}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"spans.json, line 1, field 'context.trace_id': '0x12' is neither hex"):
        load_samples(bad)
    bad.write_text('{"resourceSpans": []}\n[1]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"spans.json, line 2: expected an OpenTelemetry span .* got int"):
        load_samples(bad)
    bad.write_text('{"resourceSpans": []}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"spans.json: no spans"):
        load_samples(bad)


def test_eval_scores_a_trace_file_and_lists_the_skipped_trace(tmp_path):
    path = export(tmp_path / "spans.json")
    out = tmp_path / "report.json"
    r = cli("eval", path, "--judge", "fake", "--embedder", "fake", "-m", "faithfulness", "--no-progress",
            "--no-cache", "--no-resume", "--skip-invalid", "--no-gate", "--out", out)
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert [s["metrics"]["faithfulness"]["value"] for s in report["samples"]] == [1.0, 1.0]
    assert [s["field"] for s in report["skipped"]] == ["contexts"]


def test_base64_ids_that_begin_with_0x_are_read_as_base64(tmp_path):
    """protobuf's JSON writes ids in base64, and one id in 4,096 begins with "0x" (bytes d3 1…): not a hex prefix."""
    otlp = export(otlp=tmp_path / "otlp.json", with_health_check=False)
    doc = json.loads(otlp.read_text())
    renamed = {}
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                raw = base64.b64decode(span[key])
                new = bytes([0xD3, 0x10 | raw[1] & 0x0F]) + raw[2:]
                span[key] = base64.b64encode(new).decode()
                assert span[key].startswith("0x")
                if key == "traceId":
                    renamed[raw.hex()] = new.hex()
    otlp.write_text(json.dumps(doc), encoding="utf-8")
    samples = load_samples(otlp)[0]
    assert expected(samples) == WANTED
    assert sorted(s.id for s in samples) == sorted(renamed.values())
