"""The names a record gives that no field reads. A near miss of a field the record lacks ("refrence" in a row with
no reference, "Question", "ground_truths") is refused, naming the name it probably meant: a misspelled column must not
leave a metric "not evaluated" while the gate passes. Any other such name is listed once, as ignored
(report.meta["ignored_fields"]). A table (CSV, Parquet, a DataFrame, a `datasets` folder) has its columns checked
once, a file's error; a row of JSON Lines, JSON or a list of dicts is checked on its own (--skip-invalid skips it).

SampleList: the samples of one input with the ignored names found in them, and, for a shard of a run, the whole input
it was taken from (evaluate() checks that, not the shard: an empty shard is fine, an empty input is not)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.errors import DatasetError
from .schema import FALLBACK_ALIASES, FIELD_ALIASES, Sample, field_names

# Names localragas knows and leaves unread, neither a near miss nor listed as ignored: what its own commands write
# beside a sample (`generate`: meta, reference_contexts; `run-rag`: rag_error, refused by the row check;
# `calibrate`'s labelled rows: label, pair, better), `metadata`, and the other fields of a ragas SingleTurnSample
# (and its test set generator) and of a deepeval LLMTestCase; a conversation's fields (data/conversation_shapes.py:
# the chat format's, a ragas MultiTurnSample's, a deepeval ConversationalTestCase's), read by its reader or left
# unread.
NOT_READ: frozenset[str] = frozenset({
    "meta", "metadata", "messages", "reference_contexts", "rag_error", "label", "pair", "better",
    "multi_responses", "rubrics", "persona_name", "query_style", "query_length", "synthesizer_name",
    "additional_metadata", "tools_called", "expected_tools", "token_cost", "completion_time",
    "chat_history", "turns", "reference_topics", "reference_tool_calls", "scenario", "expected_outcome",
    "expectedOutcome", "chatbot_role", "chatbotRole", "user_description", "userDescription", "name", "comments",
    "tags",
})
# A turn row's fields (a sample of a conversation given with its earlier messages, data/sample_record.py), read beside
# a sample's own.
TURN_ROW_FIELDS: tuple[str, ...] = ("history", "standalone_question", "conversation_id")
# The fields a near miss is looked for: every one but `id` (a row without one is named by its question, and `_id`,
# `ID` or `idx` columns are common; they are listed as ignored).
NEAR_MISS_FIELDS: tuple[str, ...] = tuple(f for f in FIELD_ALIASES if f != "id")
LISTED_AT_MOST = 200  # ignored names kept; a report lists them in the order first seen


def _norm(name: str) -> str:
    """A name without case, spaces, underscores or hyphens: "Ground Truth" and "groundTruth" are "groundtruth"."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _distance(a: str, b: str, limit: int) -> int:
    """The edit distance of a and b, a swap of two neighbours counting one (optimal string alignment); any value over
    `limit` is returned as limit + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        now = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            now[j] = min(row[j] + 1, now[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                now[j] = min(now[j], before[j - 2] + 1)
        before, row = row, now
    return min(row[-1], limit + 1)


def near_miss(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate `name` is most likely a misspelling of: the same but for case, spaces, underscores and hyphens,
    or one edit away (two for a name of more than 5 letters); None when none is that close. A candidate of fewer
    than 4 letters is matched only the first way."""
    own, best = _norm(name), None
    for candidate in candidates:
        other = _norm(candidate)
        if own == other:
            return candidate
        if len(other) < 4:
            continue
        limit = 1 if len(other) <= 5 else 2
        d = _distance(own, other, limit)
        if d <= limit and (best is None or d < best[0]):
            best = (d, candidate)
    return best[1] if best else None


class FieldCheck:
    """The names an input's records give beyond those read, followed over its records (columns: the mapping in
    force, column_map.check_columns). row() refuses a record's near miss (the record's DatasetError, skippable);
    table() refuses a table's near-miss column (the file's); `ignored` holds the other names, in the order first
    seen."""

    def __init__(self, columns: Mapping[str, str] | None = None):
        self.columns = dict(columns or {})
        self.taken = set(self.columns.values())
        self.found: dict[str, None] = {}
        self.meant: dict[tuple[str, tuple[str, ...]], str | None] = {}  # (name, fields absent) -> the name meant

    @property
    def ignored(self) -> list[str]:
        return list(self.found)

    def row(self, record: Any, path: str, line: int | None, unit: str = "line") -> None:
        """Refuse a near miss in one record (a mapping: anything else is the row check's to refuse)."""
        if isinstance(record, Mapping):
            self._check(record, lambda name, meant, field: DatasetError(
                path, line, name, f"unknown field; did you mean '{meant}'? {self._fix(name, field)}", unit=unit))

    def table(self, names: Iterable[Any], path: str) -> None:
        """Refuse a near-miss column of a table; a column counts as given, whatever its cells."""
        self._check({str(n): True for n in names}, lambda name, meant, field: DatasetError(
            path, None, name, f"unknown column; did you mean '{meant}'? {self._fix(name, field)}"))

    def _fix(self, name: str, field: str) -> str:
        return f"(rename it, or map it: columns {field}={name})"

    def _check(self, record: Mapping[Any, Any], error) -> None:
        read: set[str] = set()
        absent: list[str] = []
        for field in FIELD_ALIASES:
            names = field_names(record, field, self.columns)
            read.update(names)
            if field in NEAR_MISS_FIELDS and all(record[n] is None for n in names):
                absent.append(field)
        meant_for = {n: field for field in absent for n in self._names(field)}  # a name a field is read under
        for key in record:
            name = str(key)
            if name in read or name in NOT_READ or name in FALLBACK_ALIASES or name in TURN_ROW_FIELDS:
                continue
            seen = (name, tuple(absent))  # rows of one input mostly repeat their names: each looked at once
            meant = self.meant.get(seen, ...)
            if meant is ...:
                meant = None if name in self.taken or _known(name) else near_miss(name, meant_for)
                if len(self.meant) < 10_000:
                    self.meant[seen] = meant
            if meant is not None:
                raise error(name, meant, meant_for[meant])
            if name not in self.found and len(self.found) < LISTED_AT_MOST:
                self.found[name] = None

    def _names(self, field: str) -> list[str]:
        """The names `field` is read under: its mapped column, else its own and its aliases not mapped elsewhere."""
        if field in self.columns:
            return [self.columns[field]]
        return [n for n in (field, *FIELD_ALIASES[field]) if n not in self.taken]


def _known(name: str) -> bool:
    return name in FIELD_ALIASES or any(name in aliases for aliases in FIELD_ALIASES.values())


class SampleList(list):
    """The samples of one input (a list of Samples), with `source` (the input as errors name it: its path,
    "DataFrame", "samples"), `ignored` (the names its records gave that no field reads, FieldCheck) and `whole`: for
    a part of a run (a shard), the input it was taken from, which evaluate() checks instead (a shard may be
    empty)."""

    def __init__(self, samples: Iterable[Sample] = (), ignored: Iterable[str] = (), source: str = "samples",
                 whole: "Sequence[Sample] | None" = None):
        super().__init__(samples)
        self.ignored, self.source, self.whole = list(ignored), source, whole

    def __getitem__(self, i):  # a slice (the first N, --limit) is a SampleList of the same input
        got = super().__getitem__(i)
        return SampleList(got, self.ignored, self.source, self.whole) if isinstance(i, slice) else got

    def part(self, samples: Iterable[Sample]) -> "SampleList":
        """Some of these samples (a shard), as a part of this input."""
        return SampleList(samples, self.ignored, self.source, self.whole if self.whole is not None else self)

    def at(self, positions: Iterable[int]) -> "SampleList":
        """The samples at these positions (a shard), as a part of this input."""
        return self.part(self[p] for p in positions)


# The fields a row may lack: a metric that needs one scores no row without it (unscored "no_reference", ...). `turn`:
# the sample is a conversation's turn (a row of `messages`, data/conversations.py), which the conversation metrics need.
OPTIONAL_FIELDS = ("reference", "retrieved_context_ids", "reference_context_ids", "turn")
# How a refusal names a field the rows do not give under its own name, and what to give instead
_GIVEN_AS = {"turn": ("messages", "conversations: rows of `messages` in the chat format (docs/conversations.md)")}


def refuse_unscorable(samples: list[Sample], chosen: Iterable[Any], named: Iterable[str] | None) -> None:
    """Before any judge call, refuse a metric asked for by name (`named`: the names given to -m, metrics=, the
    settings file; not a Metric object given) that needs a field no sample has (context_recall and no reference
    anywhere): it would be "not evaluated" on every row, and the gate pass. A DatasetError naming the field and the
    metrics. chosen: the run's Metric objects (their .name and .needs); samples: the input (a SampleList's `whole`
    for a shard of one)."""
    whole = getattr(samples, "whole", None) or samples
    named = set(named or ())
    if not named or not whole:
        return
    for field in OPTIONAL_FIELDS:
        wanting = [m.name for m in chosen if m.name in named and field in m.needs]
        if wanting and all(getattr(s, field) is None for s in whole):
            who = ", ".join(wanting)
            named_as, give = _GIVEN_AS.get(field, (field, f"the rows a {field} (or map its column: columns "
                                                          f"{field}=NAME)"))
            raise DatasetError(getattr(whole, "source", "samples"), None, named_as,
                               f"no row has it, and {who} (asked for by name) "
                               f"need{'s' if len(wanting) == 1 else ''} it: no row could be scored. Give {give}, "
                               f"or leave {who} out")
