"""Which samples a resume checkpoint holds finished, and where their lines are, without their results.

Checkpoint.finished (run/checkpoint.py) reads the checkpoint once, line by line, and keeps of each usable line a 64-bit
digest of its sample id, a 64-bit digest of its sample hash and the byte offset of the line (24 bytes a line, in
numpy arrays sorted by id digest, the last line of an id kept, as a dict keyed by id would): a run resumed at 900,000
of 1,000,000 samples decides which are done from 22 MB instead of 900,000 SampleResults (~14 KB each). The result of
a sample found here is read back from its line when the run takes it, and checked whole there (its id and hash), so
two ids or hashes that share a digest (a chance of about n²/2⁶⁵) only cost a sample judged again, never a wrong one.
"""
from __future__ import annotations

import hashlib
from array import array

import numpy as np


def digest64(text: str) -> int:
    """A signed 64-bit digest of a text (an id, a sample hash): the first 8 bytes of its BLAKE2b."""
    data = text.encode("utf-8", "surrogatepass")  # an id read from JSON may hold a lone surrogate
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


class FinishedIndex:
    """Lines added in file order (add), then sealed; find(sample_id, digest) gives the offset of the id's last line if
    that line's hash is `digest`, else None."""

    def __init__(self) -> None:
        self._added = (array("q"), array("q"), array("q"))  # id digests, hash digests, offsets, as read
        self.ids = self.hashes = self.offsets = np.empty(0, dtype=np.int64)

    def add(self, sample_id: str, digest: str, offset: int) -> None:
        ids, hashes, offsets = self._added
        ids.append(digest64(sample_id))
        hashes.append(digest64(digest))
        offsets.append(offset)

    def seal(self) -> "FinishedIndex":
        """Sorted by id digest, one line an id: the last one read."""
        ids, hashes, offsets = (np.frombuffer(a, dtype=np.int64) if len(a) else np.empty(0, np.int64)
                                for a in self._added)
        order = np.argsort(ids, kind="stable")  # an id's lines stay in file order: its last is the last of its run
        ranked = ids[order]
        last = np.ones(len(order), dtype=bool)
        last[:-1] = ranked[:-1] != ranked[1:]
        keep = order[last]
        self.ids, self.hashes, self.offsets = ids[keep], hashes[keep], offsets[keep]
        self._added = (array("q"), array("q"), array("q"))
        return self

    def __len__(self) -> int:
        return len(self.ids)

    def find(self, sample_id: str, digest: str) -> int | None:
        key = digest64(sample_id)
        j = int(np.searchsorted(self.ids, key))
        if j < len(self.ids) and self.ids[j] == key and self.hashes[j] == digest64(digest):
            return int(self.offsets[j])
        return None
