"""Tests for localragas.data.dataset: formats, aliases, error locations, encodings, skip_invalid."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from localragas.data.dataset import load_samples
from localragas.core.errors import DatasetError
from localragas.data.sample_record import KNOWN_FIELDS, SampleIds, content_id, sample_from_dict
from localragas.data.schema import Sample, SkippedRow

from cli_helpers import write_file as write

ROWS = [
    {"id": "a", "question": "What is X?", "contexts": ["X is a letter.", "Y too."], "answer": "A letter.",
     "reference": "A letter", "category": "alpha"},
    {"id": 7, "question": "Q2", "contexts": [], "answer": "", "reference": "", "category": None},
    {"question": "Q3, with \"quotes\"", "contexts": ["multi\nline context"], "answer": "ans3"},
]
EXPECTED = [
    Sample(id="a", question="What is X?", contexts=["X is a letter.", "Y too."], answer="A letter.",
           reference="A letter", category="alpha"),
    Sample(id="7", question="Q2", contexts=[], answer="", reference=None, category=None),
    Sample(id=content_id("Q3, with \"quotes\""), question="Q3, with \"quotes\"", contexts=["multi\nline context"],
           answer="ans3"),
]


def jsonl(rows: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def csv_text(rows: list[dict]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = ["id", "question", "contexts", "answer", "reference", "category"]
    w.writerow(cols)
    for r in rows:
        w.writerow([json.dumps(r.get(c, [])) if c == "contexts" else ("" if r.get(c) is None else r.get(c))
                    for c in cols])
    return buf.getvalue()


def raises(path: Path, **kw) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_samples(path, **kw)
    return info.value


# --- happy paths -------------------------------------------------------------------------------------------

def test_jsonl_json_csv_give_identical_samples(tmp_path: Path) -> None:
    files = [
        write(tmp_path, "d.jsonl", jsonl(ROWS)),
        write(tmp_path, "d.ndjson", jsonl(ROWS)),
        write(tmp_path, "d.json", json.dumps(ROWS, indent=2)),
        write(tmp_path, "w.json", json.dumps({"name": "x", "samples": ROWS})),
        write(tmp_path, "d.csv", csv_text(ROWS)),
    ]
    for f in files:
        samples, skipped = load_samples(f)
        assert samples == EXPECTED, f.name
        assert skipped == []
    # str paths work too
    assert load_samples(str(files[0]))[0] == EXPECTED


def test_ragas_aliases(tmp_path: Path) -> None:
    rows = [
        {"sample_id": "s1", "user_input": "Q", "retrieved_contexts": ["c"], "response": "A", "reference": "R"},
        {"user_input": "Q", "retrieved_contexts": [], "response": "A", "ground_truth": "G"},
        {"user_input": "Q", "retrieved_contexts": [], "response": "A", "reference_answer": "RA", "extra": 1},
    ]
    samples, _ = load_samples(write(tmp_path, "r.jsonl", jsonl(rows)))
    assert samples[0] == Sample(id="s1", question="Q", contexts=["c"], answer="A", reference="R")
    assert samples[1].reference == "G" and samples[1].id == content_id("Q")  # the first Q has its own id
    assert samples[2].reference == "RA"
    assert {"user_input", "retrieved_contexts", "response", "ground_truth", "reference_answer",
            "sample_id"} <= KNOWN_FIELDS


def test_alias_equal_to_canonical_is_accepted() -> None:
    s = sample_from_dict({"id": 1, "question": "Q", "user_input": "Q", "contexts": [], "answer": "A"})
    assert s.question == "Q" and s.id == "1"


def test_conflicting_alias_and_canonical(tmp_path: Path) -> None:
    p = write(tmp_path, "c.jsonl", jsonl([{"question": "Q1", "user_input": "Q2", "contexts": [], "answer": "A"}]))
    err = raises(p)
    assert err.line == 1
    assert "question" in str(err) and "user_input" in str(err)
    assert "c.jsonl" in str(err)


def test_sample_from_dict_defaults() -> None:
    s = sample_from_dict({"question": "Q", "contexts": [], "answer": "A"}, line=4)
    assert s.id is None  # the reader names it: SampleIds
    assert SampleIds("f").claim(s, 4).id == content_id("Q") == "q-" + hashlib.sha256(b"Q").hexdigest()[:10]
    assert content_id(" Q\n") == content_id("Q")  # whitespace runs as one space


# --- row errors --------------------------------------------------------------------------------------------

def test_missing_field_names_line_and_field(tmp_path: Path) -> None:
    p = write(tmp_path, "m.jsonl", jsonl([ROWS[0]]) + "\n" + json.dumps({"question": "Q", "contexts": []}) + "\n")
    err = raises(p)
    assert (err.line, err.field) == (3, "answer")
    assert str(err) == f"{p}, line 3, field 'answer': missing required field"


def test_empty_question_rejected(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "q.jsonl", jsonl([{"user_input": "  ", "contexts": [], "answer": "A"}])))
    assert (err.line, err.field) == (1, "user_input") and "empty" in str(err)


def test_contexts_as_string(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "s.jsonl", jsonl([{"question": "Q", "contexts": "one", "answer": "A"}])))
    assert (err.line, err.field) == (1, "contexts")
    assert "expected a list of strings, got str" in str(err)


def test_non_string_context_element(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "e.jsonl", jsonl([{"question": "Q", "contexts": ["ok", 3], "answer": "A"}])))
    assert (err.line, err.field) == (1, "contexts[1]")
    assert "field 'contexts[1]'" in str(err) and "got int" in str(err)


def test_wrong_types(tmp_path: Path) -> None:
    rows = [{"question": "Q", "contexts": [], "answer": None}, {"question": "Q", "contexts": [], "answer": "A", "id": 1.5},
            {"question": "Q", "contexts": [], "answer": "A", "reference": 3}, ["not", "an", "object"]]
    _, skipped = _load_skip(write(tmp_path, "t.jsonl", jsonl(rows + [ROWS[0]])))
    assert [(s.line, s.field) for s in skipped] == [(1, "answer"), (2, "id"), (3, "reference"), (4, None)]
    assert "got null" in skipped[0].reason and "expected an object, got list" in skipped[3].reason


def test_invalid_json_line(tmp_path: Path) -> None:
    p = write(tmp_path, "j.jsonl", jsonl([ROWS[0]]) + '{"question": "Q",\n')
    err = raises(p)
    assert err.line == 2 and err.field is None
    assert "j.jsonl, line 2" in str(err) and "invalid JSON" in str(err)


def test_json_document_errors_and_item_lines(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "bad.json", '[\n{"question": }\n]'))
    assert err.line == 2 and "invalid JSON" in str(err)
    err = raises(write(tmp_path, "obj.json", '{"rows": []}'))
    assert "samples" in str(err)
    text = '{"meta": {"samples": 1},\n "samples": [\n  ' + json.dumps(ROWS[0]) + ',\n\n  {"question": "Q",\n   "contexts": "x", "answer": "A"}\n]}'
    err = raises(write(tmp_path, "items.json", text))
    assert (err.line, err.field) == (5, "contexts")


def test_duplicate_id(tmp_path: Path) -> None:
    rows = [dict(ROWS[0]), dict(ROWS[1]), dict(ROWS[0], question="again")]
    err = raises(write(tmp_path, "dup.jsonl", jsonl(rows)))
    assert err.line == 3 and err.field == "id"
    assert "'a'" in str(err) and "line 1" in err.detail


def test_duplicate_default_id_clash(tmp_path: Path) -> None:
    rows = [{"question": "Q", "contexts": [], "answer": "A"}, {"id": content_id("Q"), "question": "Q", "contexts": [],
                                                               "answer": "A"}]
    err = raises(write(tmp_path, "dup2.jsonl", jsonl(rows)))
    assert err.line == 2 and content_id("Q") in str(err)


def test_default_ids_come_from_the_question_and_stay_when_rows_move(tmp_path: Path) -> None:
    """A sample without an id is named by its question, so two runs of one test set pair in compare and resume
    even when the answers change or rows are added or reordered; the same question again gets -2, -3."""
    rows = [{"question": q, "contexts": [], "answer": a} for q, a in (("Q1", "A"), ("Q2", "B"), ("Q1", "C"))]
    first, _ = load_samples(write(tmp_path, "a.jsonl", jsonl(rows)))
    assert [s.id for s in first] == [content_id("Q1"), content_id("Q2"), content_id("Q1") + "-2"]
    moved = [{"question": "Q0", "contexts": [], "answer": "new"}, {**rows[1], "answer": "other"}, rows[0], rows[2]]
    again, _ = load_samples(write(tmp_path, "b.jsonl", jsonl(moved)))
    assert [s.id for s in again] == [content_id("Q0"), content_id("Q2"), content_id("Q1"), content_id("Q1") + "-2"]


# --- CSV ---------------------------------------------------------------------------------------------------

def test_csv_bad_contexts_cell(tmp_path: Path) -> None:
    p = write(tmp_path, "b.csv", "question,contexts,answer\nQ,\"[\"\"ok\"\"]\",A\nQ2,just text,A\n")
    err = raises(p)
    assert (err.line, err.field) == (3, "contexts")
    assert "b.csv, line 3, field 'contexts'" in str(err) and "JSON list" in str(err)
    err = raises(write(tmp_path, "b2.csv", 'question,retrieved_contexts,answer\nQ,"""a string""",A\n'))
    assert (err.line, err.field) == (2, "retrieved_contexts") and "got str" in str(err)


def test_csv_empty_contexts_cell_is_empty_list(tmp_path: Path) -> None:
    samples, _ = load_samples(write(tmp_path, "e.csv", "question,contexts,answer\nQ,,A\n"))
    assert samples[0].contexts == [] and samples[0].id == content_id("Q")


def test_csv_multiline_cells_keep_line_numbers(tmp_path: Path) -> None:
    text = ('id,question,contexts,answer\n'
            '1,"a question\nspanning\nthree lines","[""c1"", ""c2\\nstill c2""]",A\n'
            '2,Q2,"[""x""]","answer on\ntwo lines"\n'
            '3,,[],A\n')
    err = raises(write(tmp_path, "ml.csv", text))
    assert (err.line, err.field) == (7, "question")
    samples, skipped = _load_skip(write(tmp_path, "ml2.csv", text))
    assert samples[0].question == "a question\nspanning\nthree lines"
    assert samples[0].contexts == ["c1", "c2\nstill c2"]
    assert samples[1].answer == "answer on\ntwo lines"
    assert [(s.line, s.field) for s in skipped] == [(7, "question")]


def test_csv_wrong_cell_count_and_duplicate_header(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "n.csv", "question,contexts,answer\nQ,[],A,extra\n"))
    assert err.line == 2 and "expected 3 cells, got 4" in str(err)
    err = raises(write(tmp_path, "h.csv", "question,question,contexts,answer\nQ,Q,[],A\n"))
    assert (err.line, err.field) == (1, "question") and "duplicate column" in str(err)


# --- encodings ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["bom.jsonl", "bom.json", "bom.csv"])
def test_bom_and_crlf(tmp_path: Path, name: str) -> None:
    text = {"jsonl": jsonl(ROWS), "json": json.dumps(ROWS, indent=1), "csv": csv_text(ROWS)}[name.split(".")[1]]
    # CRLF everywhere except inside the quoted multi-line cell, which keeps its own newline in the value
    crlf = text.replace("\n", "\r\n") if name != "bom.csv" else text.replace("\n", "\r\n").replace(
        "multi\r\nline", "multi\nline")
    samples, _ = load_samples(write(tmp_path, name, b"\xef\xbb\xbf" + crlf.encode("utf-8")))
    assert samples == EXPECTED


def test_crlf_line_numbers(tmp_path: Path) -> None:
    text = (jsonl([ROWS[0]]) + "\n" + json.dumps({"question": "Q", "contexts": "x", "answer": "A"})).replace("\n", "\r\n")
    err = raises(write(tmp_path, "crlf.jsonl", b"\xef\xbb\xbf" + text.encode()))
    assert (err.line, err.field) == (3, "contexts")


def test_non_ascii_and_line_separator_in_jsonl(tmp_path: Path) -> None:
    row = {"question": "Qu'est-ce que \u2028 ça ?", "contexts": ["日本語"], "answer": "é"}
    samples, _ = load_samples(write(tmp_path, "u.jsonl", json.dumps(row, ensure_ascii=False) + "\n"))
    assert samples[0].question == row["question"] and samples[0].contexts == ["日本語"]


def test_invalid_utf8(tmp_path: Path) -> None:
    data = (jsonl([ROWS[0]]) + '{"question": "').encode() + b"\xff\xfe" + b'", "contexts": [], "answer": "A"}\n'
    p = write(tmp_path, "bin.jsonl", data)
    err = raises(p)
    assert err.line == 2 and "bin.jsonl" in str(err) and "UTF-8" in str(err)
    offset = data.index(b"\xff")
    assert f"byte offset {offset}" in str(err)
    # a file-level error: still raised with skip_invalid
    assert raises(p, skip_invalid=True).line == 2


# --- skip_invalid and file-level errors --------------------------------------------------------------------

def _load_skip(p: Path) -> tuple[list[Sample], list[SkippedRow]]:
    return load_samples(p, skip_invalid=True)


def test_skip_invalid_collects_rows_and_keeps_good_ones(tmp_path: Path) -> None:
    lines = [json.dumps(ROWS[0]), "not json", json.dumps({"question": "Q", "contexts": [1], "answer": "A"}),
             "", json.dumps(ROWS[1]), json.dumps(ROWS[0]), json.dumps(ROWS[2])]
    p = write(tmp_path, "mix.jsonl", "\n".join(lines) + "\n")
    samples, skipped = _load_skip(p)
    assert [s.id for s in samples] == ["a", "7", content_id(ROWS[2]["question"])]
    assert all(isinstance(s, SkippedRow) and s.path == str(p) for s in skipped)
    assert [(s.line, s.field) for s in skipped] == [(2, None), (3, "contexts[0]"), (6, "id")]
    assert "invalid JSON" in skipped[0].reason and "duplicate id 'a'" in skipped[2].reason


def test_all_rows_invalid_is_an_error(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "bad.jsonl", "nope\n[]\n"), skip_invalid=True)
    assert "no samples" in str(err) and "2 invalid rows skipped" in str(err)


@pytest.mark.parametrize("name,text", [("e.jsonl", ""), ("b.jsonl", "\n  \n\r\n"), ("e.json", "[]"),
                                       ("w.json", '{"samples": []}'), ("e.csv", ""),
                                       ("h.csv", "question,contexts,answer\n")])
def test_empty_file(tmp_path: Path, name: str, text: str) -> None:
    err = raises(write(tmp_path, name, text))
    assert "no samples" in str(err) and name in str(err) and err.line is None


def test_empty_json_document_is_invalid(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "blank.json", ""))
    assert "invalid JSON" in str(err)


def test_unknown_extension(tmp_path: Path) -> None:
    err = raises(write(tmp_path, "data.txt", jsonl(ROWS)))
    assert "data.txt" in str(err) and "'.txt'" in str(err)
    for ext in (".jsonl", ".ndjson", ".json", ".csv"):
        assert ext in str(err)


def test_uppercase_extension_ok(tmp_path: Path) -> None:
    assert load_samples(write(tmp_path, "D.JSONL", jsonl(ROWS)))[0] == EXPECTED


def test_missing_file(tmp_path: Path) -> None:
    err = raises(tmp_path / "nope.jsonl", skip_invalid=True)
    assert "nope.jsonl" in str(err) and "not found" in str(err)
