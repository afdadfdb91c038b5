"""One person's review of a run's drawn items (`localragas review`, docs/spot-checks.md), whatever the front end:
the items to show (quality/review_draw.py: each metric's first n draws, seeded), the labels file they go to
(data/labels.py: one line a label, appended atomically), and the reviewer. Resumable: an item this reviewer already
labelled (or skipped) in the file is done; the rest are shown in order.

The order: each metric's items in the order of their draws, the metrics taken in turn draw by draw (faithfulness's
first draw, context recall's first, context precision's first sample, then each one's second...), so a review
stopped early leaves every metric its first draws labelled: a smaller sample of the same design, not a gap.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal

from ..data.labels import Design, Label, append_label, latest, now, read_labels
from ..data.schema import Report
from .review_draw import DEFAULT_DRAWS, Shown, plan
from .review_items import review_items, reviewable

Verdict = Literal[0, 1] | None  # 1 supported / relevant, 0 not, None skipped


def labels_beside(report_path: str | Path) -> Path:
    """The default labels file of a report: beside it, RUN.labels.jsonl for RUN.json."""
    p = Path(report_path)
    return p.with_name((p.stem if p.suffix.lower() == ".json" else p.name) + ".labels.jsonl")


def in_turn(shown: Iterable[Shown]) -> list[Shown]:
    """The items metric by metric in turn, draw by draw (the module's docstring): sorted by their first draw's order,
    the metrics in the order given, each metric's items keeping theirs."""
    items = list(shown)
    metrics = list(dict.fromkeys(s.item.metric for s in items))
    return sorted(items, key=lambda s: (min(s.orders), metrics.index(s.item.metric)))


def drawn(report: Report, *, metrics: Iterable[str] | None = None, n: int = DEFAULT_DRAWS, seed: int = 0,
          data_path: str | Path | None = None) -> list[Shown]:
    """The items a review of this report shows, in review order: each reviewable metric's (or `metrics`') first n
    draws (quality/review_draw.py plan, seeded)."""
    chosen = reviewable(report, metrics)
    return in_turn(plan(review_items(report, chosen, data_path=data_path), chosen, n=n, seed=seed))


def label_of(shown: Shown, verdict: Verdict, reviewer: str, note: str = "") -> Label:
    """A reviewer's label on a drawn item, with its design (seed, focus, the orders of its draws, its probability)."""
    item = shown.item
    return Label(key=item.key, sample_id=item.sample_id, metric=item.metric, item=item.index,
                 item_hash=item.key.rsplit("|", 1)[-1], label=verdict, reviewer=reviewer, time=now(),
                 note=note.strip(), design=Design(seed=shown.seed, focus=shown.focus, draws=shown.orders, p=shown.p))


@dataclass
class ReviewSession:
    """A reviewer's pass over the drawn items, kept in the labels file at `path` (read once when opened, appended
    to with every label)."""

    items: list[Shown]
    path: Path
    reviewer: str
    done: dict[str, Label] = field(default_factory=dict)  # item key -> this reviewer's latest label on it
    others: int = 0  # the file's lines on items not drawn here (another run, seed or --n, or another reviewer's)

    @classmethod
    def open(cls, items: list[Shown], path: str | Path, reviewer: str) -> "ReviewSession":
        """The session over `items`, resumed from the labels file at `path` (none yet: nothing done)."""
        path = Path(path)
        lines = read_labels(path) if path.exists() else []
        keys = {s.item.key for s in items}
        mine = {key: by[reviewer] for key, by in latest(lines).items() if key in keys and reviewer in by}
        return cls(items, path, reviewer, mine, sum(1 for lab in lines if lab.key not in keys))

    @property
    def total(self) -> int:
        return len(self.items)

    def todo(self) -> list[Shown]:
        """The items this reviewer has not labelled yet, in review order."""
        return [s for s in self.items if s.item.key not in self.done]

    def next_open(self, after: int) -> int:
        """The index of the first item not labelled yet after index `after` (else the first one before it: an item
        left open after going back); -1 when every item is done."""
        order = [*range(after + 1, self.total), *range(0, min(after + 1, self.total))]
        return next((i for i in order if self.items[i].item.key not in self.done), -1)

    def find(self, key: str) -> Shown | None:
        return next((s for s in self.items if s.item.key == key), None)

    def record(self, shown: Shown, verdict: Verdict, note: str = "") -> Label:
        """Append the reviewer's label on the item to the file (atomically: data/labels.py append_label) and count
        it done. A second label on an item corrects the first (the file keeps both; the last one counts)."""
        label = label_of(shown, verdict, self.reviewer, note)
        append_label(self.path, label)
        self.done[shown.item.key] = label
        return label

    def counts(self) -> dict[str, tuple[int, int]]:
        """metric -> (items done, items drawn), in review order of the metrics."""
        out: dict[str, tuple[int, int]] = {}
        for s in self.items:
            done, total = out.get(s.item.metric, (0, 0))
            out[s.item.metric] = (done + (s.item.key in self.done), total + 1)
        return out
