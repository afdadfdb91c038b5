"""Resume: each finished sample is appended to a checkpoint as it completes, so a killed run loses nothing.

One JSON line per sample: {"hash": sha256 of the sample, "result": SampleResult}. A line cut by a kill is ignored.
A result is reused only for a sample with the same id and the same content.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from pydantic import ValidationError

from .errors import CheckpointError
from .schema import Sample, SampleResult


# Optional fields added after checkpoints existed: left out of the hash while unset, so old hashes stay valid.
_LATER_FIELDS = ("retrieved_context_ids", "reference_context_ids", "language")


def sample_hash(sample: Sample) -> str:
    unset = {k for k in _LATER_FIELDS if getattr(sample, k, None) is None}
    return hashlib.sha256(sample.model_dump_json(exclude=unset).encode("utf-8")).hexdigest()


def run_key(*parts: object) -> str:
    """A stable name for a run from what decides its results (dataset, metrics, judge fingerprint, embedder…)."""
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode("utf-8")).hexdigest()[:20]


class Checkpoint:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def load(self) -> dict[str, tuple[str, SampleResult]]:
        """id -> (sample hash, result) of every complete line. Its folder is made here: an unusable place is found
        before any judging (OSError, or CheckpointError for a checkpoint that is not a file)."""
        done: dict[str, tuple[str, SampleResult]] = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not self.path.is_file():
            raise CheckpointError(f"resume checkpoint {self.path} is not a file: delete it, or run with --no-resume")
        if not self.path.is_file():
            return done
        with open(self.path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    row = json.loads(line)
                    result = SampleResult.model_validate(row["result"])
                    done[result.id] = (row["hash"], result)
                except (json.JSONDecodeError, KeyError, TypeError, ValidationError):
                    continue  # a line cut short by a kill, or from an older format
        return done

    def append(self, digest: str, result: SampleResult) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"hash": digest, "result": result.model_dump(mode="json")}, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
