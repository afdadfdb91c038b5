"""People's labels on a run's items (spot checks, docs/spot-checks.md): one JSON line per label, appended atomically.

A line: {"v": 1, "key", "sample_id", "metric", "item", "item_hash", "label": 1 | 0 | null (skipped), "reviewer",
"time" (UTC ISO 8601), "note", "design": {"seed", "focus", "draws": [orders], "p"} | null}. The key is the item's
(quality/review_items.py): sample id | metric | item index | a hash of the item's text and the sample's contexts, so a
label never applies to an item whose text changed.

Several reviewers: every reviewer's lines are kept; a reviewer's later line for an item replaces their earlier one
(`latest`: the last line wins, for corrections). A torn line (a crash of another program mid-write, an edit) is
reported with its line number, never skipped silently: appends here cannot tear (one write of the whole line).
"""
from __future__ import annotations

import csv
import fcntl
import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.atomic_write import write_atomic
from ..core.errors import LabelsError

VERSION = 1


class Design(BaseModel):
    """How the item was drawn (quality/review_draw.py): the plan's seed and focus, the orders of its draws in the
    plan (an item drawn twice has two), and its probability on one draw."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int
    focus: Literal["uniform", "uncertain"] = "uniform"
    draws: tuple[int, ...] = ()
    p: float = Field(gt=0, le=1)

    @field_validator("draws")
    @classmethod
    def _orders(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(o < 0 for o in v):
            raise ValueError("draw orders are numbers >= 0")
        return v


class Label(BaseModel):
    """One person's verdict on one item: 1 supported (relevant), 0 not, None skipped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = 1
    key: str
    sample_id: str
    metric: str
    item: int = Field(ge=0)
    item_hash: str
    label: Literal[0, 1] | None
    reviewer: str = Field(min_length=1)
    time: str
    note: str = ""
    design: Design | None = None
    # where it was read (a file and its line, or a CSV's row), for errors about it; never written
    source: str | None = Field(default=None, exclude=True)
    line: int | None = Field(default=None, exclude=True)

    @field_validator("label", mode="before")
    @classmethod
    def _no_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return int(v)
        return v

    @field_validator("reviewer")
    @classmethod
    def _reviewer(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a reviewer's name is required")
        return v.strip()

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if v.count("|") < 3:
            raise ValueError("an item key is SAMPLE_ID|METRIC|INDEX|HASH")
        return v

    @property
    def skipped(self) -> bool:
        return self.label is None


def now() -> str:
    """The time a label is written at: UTC, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _field(e: ValidationError) -> str:
    err = e.errors()[0]
    return ".".join(str(x) for x in err["loc"]) or "(line)"


def parse_line(text: str, path: str, line: int) -> Label:
    """One line of a labels file as a Label, or a LabelsError naming the file, the line and the field."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LabelsError(path, line, None, f"not a JSON object ({e.msg})") from None
    if not isinstance(data, dict):
        raise LabelsError(path, line, None, "not a JSON object")
    if data.get("v", VERSION) != VERSION:
        raise LabelsError(path, line, "v", f"labels format version {data.get('v')!r}; this localragas reads {VERSION}")
    try:
        return Label.model_validate({**data, "source": path, "line": line})
    except ValidationError as e:
        raise LabelsError(path, line, _field(e), e.errors()[0]["msg"]) from None


def read_labels(path: str | Path) -> list[Label]:
    """Every label line of the file in order (blank lines ignored). A malformed line: LabelsError (exit 2) naming the
    file, the line and the field; a last line without its newline that does not parse is reported as torn (cut
    short while written), not dropped."""
    shown = str(path)
    raw = Path(path).read_bytes()
    out: list[Label] = []
    lines = raw.split(b"\n")
    for i, b in enumerate(lines, 1):
        if not b.strip():
            continue
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError:
            raise LabelsError(shown, i, None, "not UTF-8 text") from None
        try:
            out.append(parse_line(text, shown, i))
        except LabelsError as e:
            if i == len(lines) and not raw.endswith(b"\n") and e.field is None:
                raise LabelsError(shown, i, None, "the last line is cut short (a write stopped mid-line?): delete "
                                                  "that line and label its item again") from None
            raise
    return out


def label_line(label: Label) -> bytes:
    """The line a label is stored as (one JSON object, then a newline)."""
    return (json.dumps(label.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def append_label(path: str | Path, label: Label) -> None:
    """Append one label to the file (created when missing) so that a crash loses nothing and two processes appending
    at once never interleave: one write of the whole line to a file opened O_APPEND, under an exclusive lock,
    then fsync. A file whose last line lacks its newline (torn by another program) gets one first, so the new line
    stays whole and the torn one is reported by read_labels."""
    data = label_line(label)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(path, "rb") as f:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":
                        data = b"\n" + data
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(f"{path}: short write ({written} of {len(data)} bytes)")
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def latest(labels: Iterable[Label]) -> dict[str, dict[str, Label]]:
    """item key -> reviewer -> that reviewer's last label on it (a later line corrects an earlier one)."""
    out: dict[str, dict[str, Label]] = {}
    for lab in labels:
        out.setdefault(lab.key, {})[lab.reviewer] = lab
    return out


# --- CSV, for teams that review in a spreadsheet ----------------------------------------------------------------------

CSV_COLUMNS = ("key", "sample_id", "metric", "item", "kind", "text", "question", "contexts", "answer", "reference", "label",
               "reviewer", "note", "time", "seed", "focus", "draws", "p", "item_hash")
# contexts / answer / reference: what a reviewer reads to judge the item; written for items, never read back
REQUIRED = ("key", "label", "reviewer")
_YES = {"1", "y", "yes", "true", "supported", "relevant"}
_NO = {"0", "n", "no", "false", "not supported", "unsupported", "not relevant", "irrelevant"}
_SKIP = {"s", "skip", "skipped", "?"}


def _row_of(x: Any) -> dict[str, Any]:
    """A CSV row of a Label, or of an item to review (quality/review_items.py ReviewItem, or a drawn one with
    `item`, `orders` and `p`: review_draw.Shown), its label column empty."""
    if isinstance(x, Label):
        d = x.design
        return {"key": x.key, "sample_id": x.sample_id, "metric": x.metric, "item": x.item, "kind": "", "text": "",
                "question": "", "contexts": "", "answer": "", "reference": "", "label": {1: "1", 0: "0", None: "skip"}[x.label], "reviewer": x.reviewer,
                "note": x.note, "time": x.time, "seed": "" if d is None else d.seed, "focus": "" if d is None else d.focus,
                "draws": "" if d is None else " ".join(map(str, d.draws)), "p": "" if d is None else repr(d.p),
                "item_hash": x.item_hash}
    item = getattr(x, "item", x)
    orders = getattr(x, "orders", None)
    return {"key": item.key, "sample_id": item.sample_id, "metric": item.metric, "item": item.index,
            "kind": item.kind, "text": item.text, "question": item.question or "",
            "contexts": "\n\n".join(f"[{k}] {c}" for k, c in enumerate(item.contexts, 1)),
            "answer": item.answer or "", "reference": item.reference or "", "label": "", "reviewer": "",
            "note": "", "time": "", "seed": getattr(x, "seed", ""), "focus": getattr(x, "focus", ""),
            "draws": "" if orders is None else " ".join(map(str, orders)), "p": repr(x.p) if hasattr(x, "p") else "",
            "item_hash": item.key.rsplit("|", 1)[-1]}


def _csv_text(rows: Iterable[dict[str, Any]]) -> Iterable[str]:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS))
    w.writeheader()
    for row in rows:
        w.writerow(row)
    yield buf.getvalue()


def export_csv(labels_or_items: Iterable[Any], path: str | Path) -> int:
    """Write labels (Label) or items to review (ReviewItem, or drawn items) as a CSV with CSV_COLUMNS; returns the
    rows written. A reviewer fills `label` (1 / 0 / skip, or yes / no), `reviewer` and optionally `note`."""
    rows = [_row_of(x) for x in labels_or_items]
    write_atomic(path, _csv_text(rows))
    return len(rows)


def _label_cell(text: str, path: str, row: int) -> int | None | Literal["empty"]:
    t = text.strip().lower()
    if not t:
        return "empty"
    if t in _YES:
        return 1
    if t in _NO:
        return 0
    if t in _SKIP:
        return None
    raise LabelsError(path, row, "label", f"{text!r} is not a label: 1 / yes (supported), 0 / no (not), or skip",
                      unit="row")


def import_csv(path: str | Path, reviewer: str | None = None) -> list[Label]:
    """The labels of a CSV written by export_csv and filled in (rows whose label cell is empty are not labelled yet
    and left out). Every row is checked: a bad cell is a LabelsError naming the file, the row (the header is row 1)
    and the column. reviewer: for rows whose reviewer cell is empty."""
    shown = str(path)
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise LabelsError(shown, 1, missing[0], f"the header lacks the column {missing[0]!r}; columns: "
                                                   f"{', '.join(CSV_COLUMNS)}", unit="row")
        out = []
        for row_no, row in enumerate(reader, 2):
            out.extend(_csv_label(row, shown, row_no, reviewer))
    return out


def _csv_label(row: dict[str, Any], path: str, row_no: int, reviewer: str | None) -> list[Label]:
    cell = {k: (v or "").strip() for k, v in row.items() if k is not None}
    value = _label_cell(cell.get("label", ""), path, row_no)
    if value == "empty":
        return []
    key = cell["key"]
    parts = key.split("|")
    if len(parts) < 4:
        raise LabelsError(path, row_no, "key", "an item key is SAMPLE_ID|METRIC|INDEX|HASH", unit="row")
    design = None
    if cell.get("seed"):
        try:
            design = Design(seed=int(cell["seed"]), focus=cell.get("focus") or "uniform",  # type: ignore[arg-type]
                            draws=tuple(int(o) for o in cell.get("draws", "").split()), p=float(cell.get("p") or "nan"))
        except (ValueError, ValidationError) as e:
            col = _field(e) if isinstance(e, ValidationError) else "seed, draws or p"
            raise LabelsError(path, row_no, col, f"the design columns do not parse: {e}".splitlines()[0],
                              unit="row") from None
    data = {"key": key, "sample_id": "|".join(parts[:-3]), "metric": parts[-3], "item": parts[-2],
            "item_hash": parts[-1], "label": value, "reviewer": cell.get("reviewer") or reviewer or "",
            "time": cell.get("time") or now(), "note": cell.get("note", ""), "design": design, "source": path,
            "line": row_no}
    try:
        return [Label.model_validate(data)]
    except ValidationError as e:
        field = _field(e)
        column = {"item": "key", "item_hash": "key", "sample_id": "key", "metric": "key"}.get(field, field)
        raise LabelsError(path, row_no, column, e.errors()[0]["msg"], unit="row") from None
