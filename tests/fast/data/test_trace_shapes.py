"""Trace files of the wrong shape (data/trace_readers.py), written by hand: `localragas eval` exits 2 with one line
naming the file and the place (resourceSpans[0], spans, a span's attributes), never a traceback (exit 3). A shape
that hides which trace a span belongs to is the file's error, with --skip-invalid too; a span of a known trace whose
attributes the file cannot give refuses that trace, which --skip-invalid lists skipped while the other traces are
scored."""
from __future__ import annotations

import json

import pytest

from cli_helpers import cli

TRACE, OTHER = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
FAKE = ["--judge", "fake", "--embedder", "fake", "-m", "faithfulness", "--no-progress", "--no-cache", "--no-resume",
        "--no-history", "--no-gate"]


def otlp_span(trace: str, span: str, **attributes: object) -> dict:
    return {"traceId": trace, "spanId": span, "name": "rag",
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]}


def rag_span(trace: str, span: str) -> dict:
    """A whole RAG request in one span: a RETRIEVER with its document, question and answer."""
    return otlp_span(trace, span, **{"openinference.span.kind": "RETRIEVER", "input.value": "What colour is it?",
                                    "retrieval.documents.0.document.content": "It is red.",
                                    "output.value": "It is red."})


def otlp(*spans: object) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def eval_file(tmp_path, doc: object, *more: str):
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "report.json"
    return cli("eval", path, *FAKE, "--out", out, *more), out


SPANS = "resourceSpans[0].scopeSpans[0].spans"
FILE_SHAPES = [
    ({"resourceSpans": [None]}, "resourceSpans[0]", "expected an object, got null"),
    ({"resourceSpans": "abc"}, "resourceSpans", "expected a list of objects, got a string"),
    ({"resourceSpans": [{"scopeSpans": [7]}]}, "resourceSpans[0].scopeSpans[0]", "expected an object, got a number"),
    (otlp("abc"), f"{SPANS}[0]", "expected an object, got a string"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": "abc"}]}]}, SPANS, "expected a list of objects, got a string"),
    (otlp({**rag_span(TRACE, "0123456789abcdef"), "traceId": None}), f"{SPANS}[0].traceId", "expected the span's"),
]


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("doc, place, message", FILE_SHAPES)
def test_a_file_whose_spans_cannot_be_had_exits_2_naming_the_place_even_skipping(tmp_path, doc, place, message,
                                                                                skip):
    r, _ = eval_file(tmp_path, doc, *(["--skip-invalid"] if skip else []))
    assert r.exit_code == 2, r.output
    assert f"spans.json, line 1, field '{place}': {message}" in r.output
    assert "Traceback" not in r.output and "internal error" not in r.output


SPAN_SHAPES = [
    ({"attributes": "x"}, f"{SPANS}[0].attributes", "expected a list of objects, got a string"),
    ({"attributes": [None]}, f"{SPANS}[0].attributes[0]", "expected an object, got null"),
    ({"attributes": [{"key": None, "value": {"stringValue": "a"}}]}, f"{SPANS}[0].attributes[0].key",
     "expected the attribute's name as a string, got null"),
    ({"attributes": [{"key": "n", "value": {"intValue": "many"}}]}, f"{SPANS}[0].attributes[0].value.intValue",
     "attribute 'n': expected an integer, got a string"),
    ({"attributes": [{"key": "docs", "value": {"arrayValue": {"values": "abc"}}}]},
     f"{SPANS}[0].attributes[0].value.arrayValue.values", "attribute 'docs': expected a list, got a string"),
    ({"attributes": [{"key": "kv", "value": {"kvlistValue": {"values": [None]}}}]},
     f"{SPANS}[0].attributes[0].value.kvlistValue.values[0]", "attribute 'kv': expected an object, got null"),
]


@pytest.mark.parametrize("bad, place, message", SPAN_SHAPES)
def test_a_span_whose_attributes_cannot_be_had_refuses_its_trace_naming_the_span_and_place(tmp_path, bad, place,
                                                                                          message):
    doc = otlp({**rag_span(TRACE, "0123456789abcdef"), **bad}, rag_span(OTHER, "fedcba9876543210"))
    r, _ = eval_file(tmp_path, doc)
    assert r.exit_code == 2, r.output
    assert (f"spans.json, line 1, field '{place}': trace {TRACE}: span 'rag' (0123456789abcdef): {message}"
            in r.output)
    assert "Traceback" not in r.output and "internal error" not in r.output

    r, out = eval_file(tmp_path, doc, "--skip-invalid")
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert [s["id"] for s in report["samples"]] == [OTHER]  # the other trace is scored, the bad one never
    [skipped] = report["skipped"]
    assert skipped["field"] == place and message in skipped["reason"] and TRACE in skipped["reason"]


def test_a_null_attribute_value_is_an_attribute_without_a_value(tmp_path):
    """OTLP's empty AnyValue: the attribute is there with no value; the trace is refused only for what it lacks."""
    span = rag_span(TRACE, "0123456789abcdef")
    span["attributes"] = [a if a["key"] != "output.value" else {"key": "output.value", "value": None}
                          for a in span["attributes"]]
    r, _ = eval_file(tmp_path, otlp(span))
    assert r.exit_code == 2, r.output
    assert "field 'answer'" in r.output and "no answer" in r.output


@pytest.mark.parametrize("skip", [False, True])
def test_sdk_span_attributes_that_are_not_an_object_refuse_the_trace(tmp_path, skip):
    span = {"name": "rag", "context": {"trace_id": f"0x{TRACE}", "span_id": "0x0123456789abcdef"}, "attributes": "x"}
    r, _ = eval_file(tmp_path, span, *(["--skip-invalid"] if skip else []))
    assert r.exit_code == 2, r.output
    expected = ("spans.json: no samples (1 invalid rows skipped)" if skip else
                f"spans.json, line 1, field 'attributes': trace {TRACE}: span 'rag' (0123456789abcdef): expected an "
                "object, got a string")
    assert expected in r.output
