"""One record (a mapping, from a file row or given in Python) as a Sample: the field names it may use
(schema.FIELD_ALIASES, or a column mapping), each field's type, and the ids of an input's samples (SampleIds)."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from .chat_messages import STANDALONE, turn_of
from .column_map import type_name
from ..core.errors import DatasetError
from .schema import FALLBACK_ALIASES, FIELD_ALIASES, Sample, field_names

# FIELD_ALIASES (canonical field -> the ragas, deepeval and promptfoo-style names also read) lives in data/schema.py,
# the one table Sample(...) uses too.
KNOWN_FIELDS: frozenset[str] = frozenset(n for c, a in FIELD_ALIASES.items() for n in (c, *a))
ID_FIELDS: frozenset[str] = frozenset(("retrieved_context_ids", "reference_context_ids"))


def unicode_problem(value: str) -> str | None:
    """Why a text cannot be written as UTF-8 to any file (a lone surrogate: JSON allows the escape "\\ud800", and a
    Python str may hold one), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"invalid Unicode: lone surrogate \\u{ord(value[e.start]):04x} at character {e.start}; "
                "text must be valid UTF-8")
    return None


def _check_text(value: str, path: str, line: int | None, field: str) -> None:
    """Refuse a text no report could hold (unicode_problem)."""
    problem = unicode_problem(value)
    if problem:
        raise DatasetError(path, line, field, problem)


def _get(d: Mapping[str, Any], canonical: str, path: str, line: int | None,
         kinds: tuple[type, ...], what: str, *, required: bool,
         columns: Mapping[str, str] | None = None) -> tuple[str, Any]:
    """(name used, value) of a field given by its canonical name, an alias, or its column in `columns`; checks its
    type.

    An absent or null optional field gives None; aliases given together must agree. A `context` (FALLBACK_ALIASES)
    string is one chunk.
    """
    names = field_names(d, canonical, columns)
    for other in names[1:]:
        if d[other] != d[names[0]]:
            message = f"'{names[0]}' and '{other}' are both given, with different values"
            raise DatasetError(path, line, names[0], message)
    if not names and required:
        if columns and canonical in columns:
            raise DatasetError(path, line, columns[canonical], f"missing required field (mapped to '{canonical}')")
        raise DatasetError(path, line, canonical, "missing required field")
    value = d[names[0]] if names else None
    if names and names[0] in FALLBACK_ALIASES and isinstance(value, str):
        _check_text(value, path, line, names[0])
        value = [value]
    if value is None and not required:
        return canonical, None
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise DatasetError(path, line, names[0], f"expected {what}, got {type_name(value)}")
    if isinstance(value, str):
        _check_text(value, path, line, names[0])
    return names[0], value


# Set by `localragas run-rag` on a row whose pipeline call failed (localragas.testset.rag_run): such a row is refused.
RAG_ERROR_FIELD = "rag_error"


def refuse_failed_row(d: Mapping[str, Any], path: str, line: int | None) -> None:
    """A row run-rag wrote with RAG_ERROR_FIELD (its pipeline call failed; for a conversation, one of its turns) is
    refused: DatasetError naming that field, which --skip-invalid counts as a skipped row."""
    failure = d.get(RAG_ERROR_FIELD)
    if failure is not None:
        raise DatasetError(path, line, RAG_ERROR_FIELD, f"the RAG pipeline failed on this row in run-rag "
                                                        f"({str(failure)[:300]}), so it has nothing to score: run "
                                                        "run-rag again, or give --skip-invalid to count it skipped")


def _blank_to_none(value: str | None) -> str | None:
    return value if value and value.strip() else None


def content_id(question: str) -> str:
    """The id of a sample given without one: "q-" and 10 hex digits of the sha256 of its question (whitespace runs as
    one space). A test set's questions stay when the RAG system's answers and contexts change, and when rows are
    added, removed or reordered, so `compare` and `--resume` still pair the samples of two runs."""
    return "q-" + hashlib.sha256(" ".join(question.split()).encode("utf-8")).hexdigest()[:10]


class SampleIds:
    """The ids of one input's samples. A given id must be unique (DatasetError naming where it was first used); a
    sample without one is named by its question (content_id), and a second sample with the same question gets
    "-2" after it, a third "-3", in the order they come."""

    def __init__(self, source: str, unit: str = "line"):
        self.source, self.unit = source, unit
        self.first_seen: dict[str, int | None] = {}

    def claim(self, sample: Sample, line: int | None) -> Sample:
        """The sample with its id (named here when it has none), once the id is known to be unique."""
        if sample.id is None:
            base, k = content_id(sample.question), 1
            while (sid := base if k == 1 else f"{base}-{k}") in self.first_seen:
                k += 1
            sample = sample.model_copy(update={"id": sid})
        if sample.id in self.first_seen:
            raise DatasetError(self.source, line, "id", f"duplicate id '{sample.id}' (first used on {self.unit} "
                                                        f"{self.first_seen[sample.id]})")
        self.first_seen[sample.id] = line
        return sample


def sample_from_dict(
    d: Any, *, path: str = "<memory>", line: int | None = None, columns: Mapping[str, str] | None = None,
) -> Sample:
    """Validate one record (canonical, ragas, deepeval or promptfoo-style field names, FIELD_ALIASES) and build a
    Sample; raise DatasetError if invalid.

    Without an id, the id is None: the reader names it (SampleIds.claim). columns: canonical field -> the record's
    key holding it (column_map.check_columns), read instead of the field's own names.
    """
    if not isinstance(d, Mapping):
        raise DatasetError(path, line, None, f"expected an object, got {type_name(d)}")
    kw = {"columns": columns}
    refuse_failed_row(d, path, line)
    name, question = _get(d, "question", path, line, (str,), "a string", required=True, **kw)
    if not question.strip():
        raise DatasetError(path, line, name, "must not be empty")
    name, contexts = _get(d, "contexts", path, line, (list,), "a list of strings", required=True, **kw)
    for i, c in enumerate(contexts):
        if not isinstance(c, str):
            raise DatasetError(path, line, f"{name}[{i}]", f"expected a string, got {type_name(c)}")
        _check_text(c, path, line, f"{name}[{i}]")
    _, answer = _get(d, "answer", path, line, (str,), "a string", required=True, **kw)
    _, reference = _get(d, "reference", path, line, (str,), "a string", required=False, **kw)
    _, category = _get(d, "category", path, line, (str,), "a string", required=False, **kw)
    _, raw_id = _get(d, "id", path, line, (str, int), "a string or integer", required=False, **kw)
    sid = (str(raw_id).strip() if raw_id is not None else "") or None  # SampleIds names it
    ids = {}
    for field in sorted(ID_FIELDS):
        name, value = _get(d, field, path, line, (list,), "a list of ids (strings or integers)", required=False,
                           **kw)
        for i, x in enumerate(value or []):
            if not isinstance(x, (str, int)) or isinstance(x, bool):
                raise DatasetError(path, line, f"{name}[{i}]", f"expected a string or integer, got {type_name(x)}")
            if isinstance(x, str):
                _check_text(x, path, line, f"{name}[{i}]")
        ids[field] = value
    name, language = _get(d, "language", path, line, (str,), "a string", required=False, **kw)
    if language is not None and language.strip().lower() not in ("", "en", "zh"):
        raise DatasetError(path, line, name, f"expected 'en' or 'zh', got {language!r}")
    standalone = d.get(STANDALONE)
    if standalone is not None and (not isinstance(standalone, str) or not standalone.strip()):
        raise DatasetError(path, line, STANDALONE, f"expected a non-empty string, got {type_name(standalone)}")
    return Sample(id=sid, question=standalone or question, contexts=list(contexts), answer=answer,
                  reference=_blank_to_none(reference), category=_blank_to_none(category), **ids,
                  language=_blank_to_none(language), turn=turn_of(d, question, path, line))
