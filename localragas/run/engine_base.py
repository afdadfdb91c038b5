"""What every engine shares (run/engines.py opens one: run/local_engine.py, run/dask_engine.py): the work of a run
(`Todo`, its entries each a sample at its dataset position or a task of canaries), the interface the runner drives
(`Engine`: asked the judge check once, then given the Todo, each finished entry handed to `finish(entry, result)` in
the calling thread) and the embedder threads take turns on."""
from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..data.schema import Sample, SampleResult
from ..judges.embeddings import Embedder
from .canaries import Canary, CanaryAnswers
from .checkpoint import sample_hash

Item = Sample | Canary  # what an engine scores: a sample, or a task of canaries (run/canaries.py), one like the other
Scored = SampleResult | CanaryAnswers  # what it hands back for each


@dataclass(frozen=True)
class SampleEntry:
    """A sample to score: its dataset position, and its hash (the checkpoint's key for it, run/checkpoint.py)."""

    position: int
    sample: Sample
    digest: str

    @property
    def item(self) -> Sample:
        return self.sample


@dataclass(frozen=True)
class CanaryEntry:
    """A task of the run's canaries (run/canaries.py), scored like a sample: never checkpointed, its answers tallied."""

    canary: Canary

    @property
    def item(self) -> Canary:
        return self.canary


Entry = SampleEntry | CanaryEntry
Finish = Callable[[Entry, Scored], None]


class Todo(Sequence[Entry]):
    """The samples a run scores, by their dataset positions (8 bytes each): each entry is made when read, the sample
    read from `samples` (a LazySamples reads it from its file), so a run of a million samples never holds them all. A
    slice is a Todo of those positions. The run's canaries are mixed in among them (mix)."""

    def __init__(self, samples: Sequence[Sample], positions: "array[int] | None" = None,
                 canaries: Sequence[Canary] = ()):
        self.samples, self.positions = samples, array("q") if positions is None else positions
        self.canaries = tuple(canaries)

    def add(self, position: int) -> None:
        self.positions.append(position)

    def mix(self, canaries: Sequence[Canary]) -> None:
        """The canaries among the samples to score, each after `slot` of them (the last at the end); held among the
        positions as -1 - its index in `canaries`, which only this class reads."""
        self.canaries = tuple(canaries)
        at: dict[int, list[int]] = {}
        for k, c in enumerate(self.canaries):
            at.setdefault(min(c.slot, len(self.positions)), []).append(-1 - k)
        mixed = array("q")
        for n, i in enumerate(self.positions):
            mixed.extend(at.get(n, ()))
            mixed.append(i)
        mixed.extend(at.get(len(self.positions), ()))
        self.positions = mixed

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return Todo(self.samples, self.positions[k], self.canaries)
        return self._entry(self.positions[k])

    def __iter__(self) -> Iterator[Entry]:
        for i in self.positions:
            yield self._entry(i)

    def _entry(self, i: int) -> Entry:
        if i < 0:
            return CanaryEntry(self.canaries[-1 - i])
        sample = self.samples[i]
        return SampleEntry(i, sample, sample_hash(sample))


class Engine:
    """One run's engine: where samples are scored."""

    name = "local"
    concurrency = 1  # samples scored at once (report.meta["concurrency"])

    def check(self, samples: list[Sample], enabled: bool) -> dict[str, Any]:
        """The judge check (run/judge_check.py), before any sample is scored: report.meta["judge_check"]."""
        raise NotImplementedError

    def score(self, todo: Todo, finish: Finish) -> None:
        """Score every entry of `todo`; `finish` runs in the calling thread for each, in any order."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any] | None:
        """report.meta["engine"] (None: the local engine, whose reports record none)."""
        return None


class SerialisedEmbedder(Embedder):
    """One embed() at a time: the embedding model loads lazily and is small and fast; threads take turns (the local
    engine's, a Dask worker's)."""

    def __init__(self, inner: Embedder):
        self.inner, self.name = inner, inner.name
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            return self.inner.embed(texts)

    def describe(self) -> dict:
        return self.inner.describe()
