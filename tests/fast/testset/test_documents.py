"""Documents for `localragas generate`: every reader (.txt, .md, .html, .jsonl, .pdf through pypdf), chunks cut at
paragraphs and sentences, and chunk ids stable across runs and places."""
from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import pytest

from localragas.testset.documents import CHUNK_CHARS, html_text, load_chunks, split_document
from localragas.core.errors import DatasetError, MissingDependencyError

EXAMPLE_DOCS = Path(__file__).resolve().parents[3] / "examples" / "docs"


def test_chunk_ids_are_stable_across_runs_and_places(tmp_path):
    first = load_chunks([EXAMPLE_DOCS])
    copy = shutil.copytree(EXAMPLE_DOCS, tmp_path / "elsewhere")
    again = load_chunks([copy])
    assert [(c.id, c.text) for c in first] == [(c.id, c.text) for c in again]
    assert first[0].id == "beekeeping.md#1" and len({c.id for c in first}) == len(first)
    assert all(len(c.text) <= CHUNK_CHARS for c in first)
    assert {c.document for c in first} == {p.name for p in EXAMPLE_DOCS.iterdir()}


def test_a_folder_is_read_recursively_with_relative_names(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("Alpha text here.\n\nSecond paragraph here.", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nBeta text.", encoding="utf-8")
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    assert [c.id for c in load_chunks([tmp_path])] == ["b.md#1", "sub/a.txt#1"]
    assert [c.id for c in load_chunks([tmp_path / "b.md"])] == ["b.md#1"]  # a file: its name


def test_long_paragraphs_are_cut_at_sentence_ends_and_nothing_is_lost():
    text = " ".join(f"Sentence number {i} says something." for i in range(60))
    chunks = split_document(text, 200)
    assert len(chunks) > 1 and all(len(c) <= 200 for c in chunks)
    assert all(c.endswith(".") for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_html_keeps_visible_text_only(tmp_path):
    page = ("<html><head><title>T</title><style>p{}</style></head><body><h1>Bees</h1><p>Bees &amp; wasps "
            "dance.</p><script>alert(1)</script><p>A colony has one queen.</p></body></html>")
    assert html_text(page) == "T\n\nBees\n\nBees & wasps dance.\n\nA colony has one queen."
    (tmp_path / "p.html").write_text(page, encoding="utf-8")
    assert "alert" not in load_chunks([tmp_path / "p.html"])[0].text


def test_jsonl_records_are_documents_named_by_their_id(tmp_path):
    f = tmp_path / "kb.jsonl"
    f.write_text('{"id": "faq-1", "text": "Refunds take five days."}\n{"id": 7, "text": "Shipping is free."}\n',
                 encoding="utf-8")
    assert [(c.id, c.text) for c in load_chunks([f])] == [("faq-1#1", "Refunds take five days."),
                                                          ("7#1", "Shipping is free.")]
    f.write_text('{"id": "a", "text": 3}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"kb.jsonl, line 1, field 'text': expected a string"):
        load_chunks([f])


def test_pdf_without_pypdf_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'localragas\[pdf\]'"):
        load_chunks([tmp_path / "a.pdf"])


def test_pdf_text_comes_from_pypdf_page_by_page(tmp_path, monkeypatch):
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    page = types.SimpleNamespace
    fake = types.ModuleType("pypdf")
    fake.PdfReader = lambda path: types.SimpleNamespace(pages=[page(extract_text=lambda: "Page one text."),
                                                               page(extract_text=lambda: "Page two text.")])
    monkeypatch.setitem(sys.modules, "pypdf", fake)
    assert load_chunks([tmp_path / "a.pdf"])[0].text == "Page one text.\n\nPage two text."


def test_bad_sources_are_refused_by_name(tmp_path):
    with pytest.raises(DatasetError, match="no such file or folder"):
        load_chunks([tmp_path / "missing"])
    (tmp_path / "x.docx").write_bytes(b"PK")
    with pytest.raises(DatasetError, match=r"x.docx: not a document localragas reads"):
        load_chunks([tmp_path / "x.docx"])
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "a.txt").write_text("One.", encoding="utf-8")
    (tmp_path / "two" / "a.txt").write_text("Two.", encoding="utf-8")
    with pytest.raises(DatasetError, match="a second document named 'a.txt'"):
        load_chunks([tmp_path / "one", tmp_path / "two"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="no text found"):
        load_chunks([tmp_path / "empty"])
