"""Traces of a chat session (data/trace_readers.py): spans made by the OpenTelemetry SDK with a session id
(OpenInference's `session.id`, OTel GenAI's `gen_ai.conversation.id`) are one conversation, each trace a turn in
start order, read as the chat-format row of the same exchanges; a trace without one stays its own sample; an
incomplete trace refuses its whole session, naming it. No network."""
from __future__ import annotations

import json

import pytest

from localragas import load_samples
from localragas.core.errors import DatasetError
from localragas.data.sample_inputs import as_samples

from cli_helpers import cli

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is not installed (pip install 'localragas[test]')")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402

PLANS = [("What does the basic plan cost?", "The basic plan is $10 a month.", "d1", "It costs $10 a month."),
         ("And the premium tier?", "The premium tier is $25 a month.", "d2", "It costs $25 a month.")]
SINGLE = ("How long is the warranty?", "The warranty lasts two years.", "d3", "Two years.")


def record(path, session_key="session.id", session="chat-42", answered=True):
    """The two requests of one chat session (a CHAIN root carrying the session id, a RETRIEVER and an LLM span each),
    then a request of no session, written by the SDK's ConsoleSpanExporter; not answered: the session's second LLM
    span has no output."""
    provider = TracerProvider()
    with open(path, "w", encoding="utf-8") as out:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        tracer = provider.get_tracer("chat-service")
        for n, (question, doc, doc_id, answer) in enumerate([*PLANS, SINGLE]):
            own = {session_key: session} if n < len(PLANS) else {}
            with tracer.start_as_current_span("chat", attributes={"openinference.span.kind": "CHAIN",
                                                                  "input.value": question, **own}):
                with tracer.start_as_current_span("retrieve", attributes={
                        "openinference.span.kind": "RETRIEVER", "input.value": question, **own,
                        "retrieval.documents.0.document.content": doc,
                        "retrieval.documents.0.document.id": doc_id}):
                    pass
                with tracer.start_as_current_span("llm", attributes={
                        "openinference.span.kind": "LLM", **own,
                        **({"llm.output_messages.0.message.content": answer} if answered or n != 1 else {})}):
                    pass
        provider.shutdown()
    return path


CHAT = {"id": "chat-42", "messages": [
    m for question, doc, doc_id, answer in PLANS
    for m in ({"role": "user", "content": question},
              {"role": "assistant", "content": answer, "contexts": [doc], "retrieved_context_ids": [doc_id]})]}


@pytest.mark.parametrize("key", ["session.id", "gen_ai.conversation.id"])
def test_a_sessions_traces_are_one_conversation_and_a_trace_without_one_a_sample(tmp_path, key):
    samples, _ = load_samples(record(tmp_path / "spans.json", key))
    assert [s.id for s in samples[:2]] == ["chat-42#1", "chat-42#2"]
    assert [s.model_dump() for s in samples[:2]] == [s.model_dump() for s in as_samples([CHAT])]
    single = samples[2]
    assert single.turn is None and len(single.id) == 32 and single.question == SINGLE[0]  # its trace id


def test_an_incomplete_trace_refuses_its_session_naming_it(tmp_path):
    path = record(tmp_path / "spans.json", answered=False)
    with pytest.raises(DatasetError, match=r"field 'answer': session 'chat-42': trace [0-9a-f]{32}: no answer"):
        load_samples(path)
    out = tmp_path / "report.json"
    r = cli("eval", path, "--judge", "fake", "--embedder", "fake", "-m", "faithfulness", "--no-progress",
            "--no-cache", "--no-resume", "--no-history", "--no-gate", "--skip-invalid", "--out", out)
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert len(report["samples"]) == 1 and report["samples"][0].get("turn") is None  # the session skipped whole
    (skipped,) = report["skipped"]
    assert skipped["field"] == "answer" and skipped["reason"].startswith("session 'chat-42': trace ")
