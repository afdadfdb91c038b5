"""The samples' own tokens: question + contexts + answer + reference of each sample, counted with the judge's tokenizer
(llama.cpp's, the GGUF's vocabulary alone: no weights are loaded, nothing is generated). Issue 50's yardstick: a run's
evaluated prompt tokens per sample against the sample's own (research.benchmarks.side_by_side --own-tokens).

The samples are read by localragas's own loader (data/dataset.load_samples), so `ground_truth` and the other names a
file may give a field are read as eval reads them. The judge is named as eval names it: a catalogue judge (its GGUF in
the models folder) or a .gguf path; the fake judge and judge servers have no tokenizer here.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Collection
from pathlib import Path
from typing import Any

from localragas.core.errors import LocalragasError
from localragas.data.dataset import load_samples
from localragas.judges import catalogue


def gguf_or_why(judge: str | None) -> Path | str:
    """The GGUF file of the judge eval would use (None: the default judge), found as eval finds it
    (catalogue.path: the models folder in use, the file's size checked), or why its own tokens cannot be counted
    here, as a line."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "own tokens: skipped, llama_cpp is not installed"
    name = judge or catalogue.DEFAULT_JUDGE
    spec = catalogue.CATALOGUE.get(name)
    if spec is not None and spec.role == "judge":
        try:
            return catalogue.path(name)
        except LocalragasError as e:
            return f"own tokens: skipped, {e}"
    if not name.lower().endswith(".gguf"):
        return f"own tokens: skipped, the judge {name!r} is not a llama.cpp GGUF"
    return Path(name) if Path(name).is_file() else f"own tokens: skipped, the judge's GGUF {name} is not there"


def count(data: Path, gguf: Path, ids: Collection[str] | None = None) -> dict[str, Any]:
    """{"samples": n, "total": tokens, "per_sample": {id: tokens}} of the samples in `data` (those of `ids` only, when
    given: the samples a report scored)."""
    from llama_cpp import Llama  # noqa: PLC0415 (the research extra's, loaded only when counting)

    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    samples, _ = load_samples(data, skip_invalid=True)
    per: dict[str, int] = {}
    for s in samples:
        sid = str(s.id)
        if ids is not None and sid not in ids:
            continue
        texts = [s.question, *s.contexts, s.answer, s.reference or ""]
        per[sid] = sum(len(vocab.tokenize(t.encode(), add_bos=False, special=False)) for t in texts if t)
    return {"samples": len(per), "total": sum(per.values()), "per_sample": per, "gguf": str(gguf)}
