"""Bad input, table-driven: each case through load_samples and through `localragas eval --judge fake --embedder fake`.

A case is either refused with an exact message naming file, line and field (exit code 2), or loaded and evaluated
with every metric giving a score or an `unscored` reason (never a crash, never a traceback).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

import pytest

from localragas.core.sentences import sentences
from localragas.data.dataset import load_samples
from localragas.core.errors import DatasetError
from localragas.data.schema import Report, Sample

from cli_helpers import cli, write_file as write

ROW = {"id": "a", "question": "What colour is the sky?", "contexts": ["The sky is blue on a clear day."],
       "answer": "The sky is blue.", "reference": "The sky is blue."}


def line(**changes) -> str:
    row = {k: v for k, v in {**ROW, **changes}.items() if v is not ...}
    return json.dumps(row, ensure_ascii=False)


def jsonl(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


@dataclass
class Bad:
    """A file refused with exactly `message` ({p} is the file's path)."""

    name: str
    data: bytes
    message: str


@dataclass
class Ok:
    """A file that loads; `check` looks at the loaded samples and the JSON report of the eval."""

    name: str
    data: bytes
    check: Callable[[list[Sample], Report], None] = field(default=lambda samples, report: None)


LONG_ANSWER = " ".join(f"Fact {i}: the sky over region {i} is blue at noon." for i in range(300))[:10_000]
HUGE_CONTEXT = " ".join(f"Paragraph {i} explains that the sky looks blue because of Rayleigh scattering."
                        for i in range(800))  # ~60,000 characters: far more than the fake judge's 8192-token window
CJK = {"question": "天空是什么颜色？", "contexts": ["晴天时天空是蓝色的。", "夜晚天空是黑色的。"], "answer": "天空是蓝色的。",
       "reference": "晴天时天空是蓝色的。"}
EMOJI = {"question": "What colour is the sky? 🌤️", "contexts": ["The sky 🌌 is blue 💙 on a clear day ☀️."],
         "answer": "The sky is blue 💙.", "reference": "The sky is blue."}
RTL = {"question": "ما لون السماء؟", "contexts": ["السماء زرقاء في يوم صاف.", "השמיים כחולים \u202eגולש\u202c."],
       "answer": "السماء زرقاء.", "reference": "السماء زرقاء."}


def metric(report: Report, name: str, sample: int = 0):
    return report.samples[sample].metrics[name]


def all_metrics_scored_or_reasoned(report: Report) -> None:
    for s in report.samples:
        for name, r in s.metrics.items():
            assert (r.value is None) == (r.unscored is not None), (s.id, name, r)
            assert r.value is None or 0.0 <= r.value <= 1.0
            assert not (r.unscored or "").startswith("error:"), (s.id, name, r.unscored)  # no bug surfaced as a result


def _long_answer(samples, report):
    assert len(samples[0].answer) == 10_000
    r = metric(report, "faithfulness")
    # the default judges the answer's own sentences: every one, none dropped (the judge's claims of a long answer,
    # extracted piece by piece: test_window_fitting.py)
    assert r.scored and [c["claim"] for c in r.evidence["claims"]] == sentences(samples[0].answer)
    assert len(r.evidence["claims"]) > 16 and "warnings" not in r.evidence


def _two_hundred_chunks(samples, report):
    assert len(samples[0].contexts) == 200
    r = metric(report, "context_precision")
    assert r.scored and [c["rank"] for c in r.evidence["chunks"]] == list(range(1, 201))
    # graded verdicts (the default): one call per chunk, so each fits and nothing is split
    assert all("p_relevant" in c for c in r.evidence["chunks"]) and "warnings" not in r.evidence
    assert metric(report, "faithfulness").scored


def _huge_context(samples, report):
    for name in ("faithfulness", "context_recall"):
        r = metric(report, name)
        assert r.scored, name
        assert any("context(s) 1 were split into pieces" in w for w in r.evidence["warnings"]), name
    assert any(w.startswith("chunk(s) 1 did not fit the judge's context window") and "judged in pieces" in w
               for w in metric(report, "context_precision").evidence["warnings"])


def _no_reference(samples, report):
    assert samples[0].reference is None
    assert metric(report, "context_recall").unscored == "no_reference"
    assert metric(report, "faithfulness").scored


def _empty_answer(samples, report):
    assert metric(report, "faithfulness").unscored == "no_claims"
    assert metric(report, "answer_relevancy").value == 0.0


def _no_contexts(samples, report):
    assert metric(report, "context_precision").unscored == "no_contexts"
    assert metric(report, "faithfulness").evidence["note"] == "no contexts: no statement can be supported"


def _text_kept(expected: dict) -> Callable[[list[Sample], Report], None]:
    def check(samples, report):
        s = samples[0]
        assert (s.question, s.contexts, s.answer) == (expected["question"], expected["contexts"], expected["answer"])
        assert metric(report, "context_precision").scored and metric(report, "answer_relevancy").scored
    return check


def _nul_kept(samples, report):
    assert samples[0].answer == "The sky\x00 is blue."
    assert metric(report, "faithfulness").scored


def _two_samples(samples, report):
    assert [s.id for s in samples] == ["a", "b"]


BAD = [
    Bad("empty.jsonl", b"", "{p}: no samples"),
    Bad("blank.jsonl", b"\n  \r\n\n", "{p}: no samples"),
    Bad("empty.json", b"[]", "{p}: no samples"),
    Bad("header-only.csv", b"question,contexts,answer\r\n", "{p}: no samples"),
    Bad("invalid-utf8.jsonl", jsonl(line()) + b'{"id": "b", "question": "\xff\xfe"}\n',
        f"{{p}}, line 2: invalid UTF-8 at byte offset {len(jsonl(line())) + 25}; the file must be UTF-8 encoded"),
    Bad("latin1.csv", "question,contexts,answer\r\ncafé,[],A\r\n".encode("latin-1"),
        "{p}, line 2: invalid UTF-8 at byte offset 29; the file must be UTF-8 encoded"),
    Bad("truncated.jsonl", jsonl(line(), line(id="b"))[:-40],
        "{p}, line 2: invalid JSON: Unterminated string starting at (column 111)"),
    Bad("truncated.json", json.dumps([ROW, {**ROW, "id": "b"}], indent=1).encode()[:-60],
        "{p}, line 17: invalid JSON: Expecting ':' delimiter (column 11)"),
    Bad("contexts-string.jsonl", jsonl(line(contexts="The sky is blue.")),
        "{p}, line 1, field 'contexts': expected a list of strings, got str"),
    Bad("contexts-numbers.jsonl", jsonl(line(), line(id="b", contexts=["ok", 42])),
        "{p}, line 2, field 'contexts[1]': expected a string, got int"),
    Bad("contexts-null.jsonl", jsonl(line(contexts=None)), "{p}, line 1, field 'contexts': expected a list of strings, got null"),
    Bad("context-object.jsonl", jsonl(line(contexts=[{"text": "x"}])),
        "{p}, line 1, field 'contexts[0]': expected a string, got dict"),
    Bad("question-number.jsonl", jsonl(line(question=42)), "{p}, line 1, field 'question': expected a string, got int"),
    Bad("answer-null.jsonl", jsonl(line(answer=None)), "{p}, line 1, field 'answer': expected a string, got null"),
    Bad("answer-nan.jsonl", jsonl(line().replace('"The sky is blue."}', "NaN}")),
        "{p}, line 1, field 'reference': expected a string, got float"),
    Bad("id-bool.jsonl", jsonl(line(id=True)), "{p}, line 1, field 'id': expected a string or integer, got bool"),
    Bad("reference-list.jsonl", jsonl(line(reference=["a"])), "{p}, line 1, field 'reference': expected a string, got list"),
    Bad("row-array.jsonl", jsonl('["What colour is the sky?", [], "Blue."]'), "{p}, line 1: expected an object, got list"),
    Bad("missing-answer.jsonl", jsonl(line(), line(id="b", answer=...)), "{p}, line 2, field 'answer': missing required field"),
    Bad("missing-contexts.jsonl", jsonl(line(contexts=...)), "{p}, line 1, field 'contexts': missing required field"),
    Bad("empty-question.jsonl", jsonl(line(question="  ")), "{p}, line 1, field 'question': must not be empty"),
    Bad("duplicate-ids.jsonl", jsonl(line(), line(id="b"), line()),
        "{p}, line 3, field 'id': duplicate id 'a' (first used on line 1)"),
    Bad("raw-nul.jsonl", jsonl(line(answer="The sky\x00 is blue.").replace("\\u0000", "\x00")),
        "{p}, line 1: invalid JSON: Invalid control character at (column 119)"),
    Bad("lone-surrogate.jsonl", jsonl(json.dumps({**ROW, "question": "Sky\ud800?"})),  # written as the escape \ud800
        "{p}, line 1, field 'question': invalid Unicode: lone surrogate \\ud800 at character 3; text must be valid UTF-8"),
    Bad("huge-integer.jsonl", jsonl(line().replace('"id": "a"', '"id": ' + "9" * 5000)),
        "{p}, line 1: invalid JSON: Exceeds the limit (4300 digits) for integer string conversion"),
    Bad("deep-nesting.jsonl", jsonl("[" * 100_000 + "]" * 100_000), "{p}, line 1: invalid JSON: nested too deeply"),
    Bad("csv-contexts-text.csv", b"question,contexts,answer\r\nQ?,just text,A\r\n",
        "{p}, line 2, field 'contexts': expected a JSON list of strings, got plain text; write the cell as a JSON "
        'list, e.g. ["just text"] (in the CSV file: "[""just text""]"); several: ["first", "second"]'),
    Bad("csv-contexts-number.csv", b"question,contexts,answer\r\nQ?,42,A\r\n",
        "{p}, line 2, field 'contexts': expected a JSON list of strings, got int; write the cell as a JSON "
        'list, e.g. ["42"] (in the CSV file: "[""42""]"); several: ["first", "second"]'),
    Bad("csv-contexts-broken-list.csv", b'question,contexts,answer\r\nQ?,"[""a"", ",A\r\n',
        "{p}, line 2, field 'contexts': expected a JSON list of strings, got invalid JSON: Expecting value"),
    Bad("data.txt", jsonl(line()), "{p}: unsupported file extension '.txt'; supported: .jsonl, .ndjson, .json, .csv, .parquet, or a datasets folder"),
]

OK = [
    Ok("bom.jsonl", b"\xef\xbb\xbf" + jsonl(line(), line(id="b")), _two_samples),
    Ok("crlf.jsonl", jsonl(line(), line(id="b")).replace(b"\n", b"\r\n"), _two_samples),
    Ok("bom-crlf.csv", b"\xef\xbb\xbfid,question,contexts,answer\r\na,Q?,\"[\"\"c\"\"]\",A.\r\nb,Q?,[],A.\r\n",
       _two_samples),
    Ok("no-reference.jsonl", jsonl(line(reference=...)), _no_reference),
    Ok("empty-answer.jsonl", jsonl(line(answer="")), _empty_answer),
    Ok("no-contexts.jsonl", jsonl(line(contexts=[])), _no_contexts),
    Ok("long-answer.jsonl", jsonl(line(answer=LONG_ANSWER)), _long_answer),
    Ok("200-chunks.jsonl", jsonl(line(contexts=[f"Chunk {i}: the sky is blue in region {i} during the day, as "
                                                  f"weather station {i} reported all year." for i in range(200)])),
       _two_hundred_chunks),
    Ok("context-over-window.jsonl", jsonl(line(contexts=[HUGE_CONTEXT, "The sky is blue."])), _huge_context),
    Ok("cjk.jsonl", jsonl(line(**CJK)), _text_kept(CJK)),
    Ok("emoji.jsonl", jsonl(line(**EMOJI)), _text_kept(EMOJI)),
    Ok("rtl.jsonl", jsonl(line(**RTL)), _text_kept(RTL)),
    Ok("nul-escaped.jsonl", jsonl(line(answer="The sky\x00 is blue.")), _nul_kept),
]

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate", "--no-cache", "--no-resume"]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_file_is_refused_naming_file_line_and_field(tmp_path, case: Bad):
    p = write(tmp_path, case.name, case.data)
    expected = case.message.format(p=p)
    with pytest.raises(DatasetError) as e:
        load_samples(p)
    assert str(e.value) == expected

    r = cli("eval", str(p), *FAST)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)  # a message, never a traceback
    assert f"Error: {expected}\n" in r.output


@pytest.mark.parametrize("case", OK, ids=lambda c: c.name)
def test_odd_but_valid_file_is_evaluated(tmp_path, case: Ok):
    p = write(tmp_path, case.name, case.data)
    samples, skipped = load_samples(p)
    assert skipped == []
    out = tmp_path / "report.json"
    r = cli("eval", str(p), *FAST, "--out", str(out), "--csv", str(tmp_path / "s.csv"))
    assert r.exit_code == 0, r.output
    report = Report.model_validate_json(out.read_text(encoding="utf-8"))
    assert [s.id for s in report.samples] == [s.id for s in samples]
    all_metrics_scored_or_reasoned(report)
    case.check(samples, report)


def test_the_judges_claims_of_a_long_answer_are_extracted_piece_by_piece(tmp_path):
    p = write(tmp_path, "long-answer.jsonl", jsonl(line(answer=LONG_ANSWER)))
    out = tmp_path / "report.json"
    r = cli("eval", str(p), *FAST, "-m", "faithfulness", "--metric-option", "faithfulness.statements=claims",
            "--out", str(out))
    assert r.exit_code == 0, r.output
    m = metric(Report.model_validate_json(out.read_text(encoding="utf-8")), "faithfulness")
    assert m.scored and len(m.evidence["claims"]) > 16  # more claims than one reply can hold
    assert any("was split into 7 pieces for claim extraction (at most 16 claims per reply)" in w
               for w in m.evidence["warnings"])


def test_every_bad_row_is_skipped_with_its_reason_and_the_good_ones_are_scored(tmp_path):
    """--skip-invalid: one file holding every row-level problem of the table, between good rows."""
    row_cases = [c for c in BAD if c.name.endswith(".jsonl") and c.message.startswith("{p}, line 1")]
    lines = [line(id="good-first")]
    for c in row_cases:
        lines.extend(c.data.decode("utf-8", "surrogatepass").strip("\n").split("\n"))
    lines.append(line(id="good-last"))
    p = write(tmp_path, "mixed.jsonl", "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n")
    samples, skipped = load_samples(p, skip_invalid=True)
    assert [s.id for s in samples] == ["good-first", "good-last"]
    assert [sk.line for sk in skipped] == list(range(2, 2 + len(row_cases)))
    for sk, c in zip(skipped, row_cases):
        shown = str(DatasetError(sk.path, sk.line, sk.field, sk.reason))
        assert shown == c.message.format(p=p).replace(", line 1", f", line {sk.line}", 1)
    out = tmp_path / "r.json"
    r = cli("eval", str(p), *FAST, "--skip-invalid", "--out", str(out))
    assert r.exit_code == 0, r.output
    report = Report.model_validate_json(out.read_text(encoding="utf-8"))
    assert len(report.skipped) == len(row_cases) and len(report.samples) == 2
