"""The documents `localragas generate` writes a test set from: read from files or folders (.txt, .md, .html, .pdf,
.jsonl of {id, text}) and split into chunks with stable ids.

Chunk ids: `<name>#<n>`, n counting from 1 in the document's order. <name> is the file's path relative to the folder
given (`examples/docs` -> `tea.md`, `sub/notes.txt`), or the file's name when a file is given; a .jsonl record's
chunks are named by its `id` (a record that fits one chunk: `<id>#1`). The same files give the same ids on every run
and machine; an edit to a document renumbers its own chunks only.

Chunks: paragraphs (blank-line separated) packed up to CHUNK_CHARS characters; a longer paragraph is cut at sentence
ends (localragas.judge_calls.text.split_text). No overlap between chunks.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ..judge_calls.text import pack, split_text
from ..core.errors import DatasetError, MissingDependencyError

CHUNK_CHARS = 800  # the most characters in one chunk (a paragraph longer than this is cut at sentence ends)
MIN_CHUNK_CHARS = 40  # a shorter paragraph is joined to the next one (headings, list stubs)
SUFFIXES = (".txt", ".md", ".html", ".htm", ".pdf", ".jsonl")


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    document: str  # the document's name (the id's part before '#')


class _HtmlText(HTMLParser):
    """The visible text of an HTML page: script and style left out, a paragraph break after each block element."""

    BLOCKS = frozenset("p div section article header footer li ul ol h1 h2 h3 h4 h5 h6 tr table pre blockquote "
                       "br hr title".split())
    HIDDEN = frozenset(("script", "style", "noscript", "template"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)

    def text(self) -> str:
        paragraphs = ("".join(self.parts)).split("\n\n")
        return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def html_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return parser.text()


def pdf_text(path: Path) -> str:
    """The text of a PDF, page by page (pypdf, the `pdf` extra)."""
    try:
        from pypdf import PdfReader  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(f"{path}: reading .pdf files needs pypdf: pip install 'localragas[pdf]'") from None
    try:
        return "\n\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)
    except Exception as e:  # noqa: BLE001 - pypdf raises many kinds for a damaged file
        raise DatasetError(str(path), None, None, f"could not read the PDF ({type(e).__name__}: {e})") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise DatasetError(str(path), None, None, f"not UTF-8 text (byte {e.start})") from None


def _jsonl_documents(path: Path) -> list[tuple[str, str]]:
    """(id, text) of each record of a .jsonl file of {id, text}."""
    out, seen = [], set()
    for line, raw in enumerate(_read_text(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            raise DatasetError(str(path), line, None, "invalid JSON") from None
        if not isinstance(record, dict):
            raise DatasetError(str(path), line, None, "expected an object {\"id\": ..., \"text\": ...}")
        rid, text = record.get("id"), record.get("text")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
            raise DatasetError(str(path), line, "id", "expected a non-empty string or integer")
        if not isinstance(text, str):
            raise DatasetError(str(path), line, "text", "expected a string")
        rid = str(rid).strip()
        if rid in seen:
            raise DatasetError(str(path), line, "id", f"duplicate id '{rid}'")
        seen.add(rid)
        out.append((rid, text))
    return out


def document_text(path: Path) -> str:
    """The text of one .txt, .md, .html or .pdf file."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return pdf_text(path)
    text = _read_text(path)
    return html_text(text) if suffix in (".html", ".htm") else text


def _files(source: Path) -> list[tuple[str, Path]]:
    """(name, path) of each document file of a folder (recursively, in name order) or of a file."""
    if source.is_dir():
        found = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        return [(p.relative_to(source).as_posix(), p) for p in found]
    if not source.is_file():
        raise DatasetError(str(source), None, None, "no such file or folder")
    if source.suffix.lower() not in SUFFIXES:
        raise DatasetError(str(source), None, None, f"not a document localragas reads ({', '.join(SUFFIXES)})")
    return [(source.name, source)]


def split_document(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """Chunks of a text: its paragraphs packed up to `limit` characters, a longer paragraph cut at sentence ends."""
    paragraphs = [" ".join(p.split()) for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    pieces = [s.strip() for p in paragraphs for s in split_text(p, limit)]
    pieces = [p for p in pieces if p]
    groups = pack(pieces, lambda p: len(p) + 2, limit)
    chunks = ["\n\n".join(g) for g in groups]
    if len(chunks) > 1 and len(chunks[-1]) < MIN_CHUNK_CHARS:  # a trailing stub joins the chunk before it
        chunks[-2:] = ["\n\n".join(chunks[-2:])]
    return chunks


def load_chunks(sources: list[str | Path], limit: int = CHUNK_CHARS) -> list[Chunk]:
    """The chunks of every document in `sources` (files or folders), in order; ids `<name>#<n>` (module docstring).
    Two documents of one name are refused (DatasetError naming both)."""
    chunks: list[Chunk] = []
    names: dict[str, Path] = {}
    for source in sources:
        for name, path in _files(Path(source)):
            documents = _jsonl_documents(path) if path.suffix.lower() == ".jsonl" else [(name, document_text(path))]
            for doc, text in documents:
                if doc in names:
                    raise DatasetError(str(path), None, None, f"a second document named '{doc}' (the first: "
                                                              f"{names[doc]}); chunk ids would not be unique")
                names[doc] = path
                chunks += [Chunk(f"{doc}#{n}", t, doc) for n, t in enumerate(split_document(text, limit), 1)]
    if not chunks:
        raise DatasetError(", ".join(map(str, sources)), None, None,
                           f"no text found (documents read: {', '.join(SUFFIXES)})")
    return chunks
