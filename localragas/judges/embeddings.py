"""Sentence embedders for answer relevancy: sentence-transformers (CPU or CUDA), loaded lazily; a hashing fake."""
from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from . import catalogue
from ..core.errors import ConfigError, MissingDependencyError
from ..core.offline import ensure_offline


class Embedder:
    name: str = "embedder"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised row vectors, one per text."""
        raise NotImplementedError

    def similarities(self, anchor: str, others: list[str]) -> list[float]:
        vecs = self.embed([anchor, *others])
        return [float(x) for x in vecs[1:] @ vecs[0]]

    def describe(self) -> dict:
        return {"name": self.name}


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, folder: Path, label: str, device: str | None = None, batch_size: int = 64):
        self.folder, self.name, self.batch_size = Path(folder), label, batch_size
        self._device = device
        self._model = None

    @property
    def device(self) -> str:
        if self._device is None:
            import torch  # noqa: PLC0415

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    def _load(self):
        if self._model is None:
            ensure_offline()  # before sentence_transformers imports huggingface_hub, which reads them once
            try:
                from sentence_transformers import SentenceTransformer  # noqa: PLC0415
            except ImportError as e:
                raise _missing(self.name, f"{e}") from None
            from transformers.utils import logging as hf_logging  # noqa: PLC0415

            hf_logging.disable_progress_bar()  # no "Loading weights" bar in our output
            self._model = SentenceTransformer(str(self.folder), device=self.device, local_files_only=True)
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        vecs = self._load().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)

    def describe(self) -> dict:
        return {"name": self.name, "path": str(self.folder), "device": self._device or "not loaded"}


class HashingEmbedder(Embedder):
    """Deterministic bag-of-words vectors (hashed), for fast tests: no model, no torch."""

    name = "fake"

    def __init__(self, dims: int = 512):
        self.dims = dims

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class CachedEmbedder(Embedder):
    """Vectors kept in the judge cache's database, so a cached re-run never loads the embedding model."""

    def __init__(self, inner: Embedder, cache):
        self.inner, self.cache = inner, cache
        self.name = inner.name
        ident = inner.describe()
        self._prefix = f"{ident.get('name')}|{ident.get('path', '')}|"

    def embed(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256((self._prefix + t).encode("utf-8")).hexdigest() for t in texts]
        found = [self.cache.get_vector(k) for k in keys]
        vectors: list[np.ndarray | None] = [None if v is None else self._vector(v) for v in found]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            for i, vec in zip(missing, fresh):
                vectors[i] = vec.astype(np.float32)
                self.cache.put_vector(keys[i], vectors[i].tobytes())
        if len({v.size for v in vectors}) > 1:
            raise self.cache.error(f"holds embeddings of different sizes ({sorted({v.size for v in vectors})}) "
                                   "for one embedder")
        return np.stack(vectors)

    def _vector(self, blob: object) -> np.ndarray:
        """A cached vector, checked: whole float32 values, finite, unit length (embed() returns unit vectors; zero for a
        text with no word). A corrupt one is a CacheError: never a silent similarity."""
        if not isinstance(blob, bytes) or not blob or len(blob) % 4:
            what = f"{len(blob)} bytes" if isinstance(blob, bytes) else f"a {type(blob).__name__}"
            raise self.cache.error(f"holds a corrupt embedding ({what}, not float32 values)")
        v = np.frombuffer(blob, dtype=np.float32)
        norm = float(np.linalg.norm(v)) if np.isfinite(v).all() else float("nan")
        if not (abs(norm - 1.0) < 1e-3 or norm == 0.0):
            raise self.cache.error(f"holds a corrupt embedding (length {norm:.4g}, not a unit vector)")
        return v

    def describe(self) -> dict:
        return self.inner.describe()


def _missing(label: str, why: str = "not installed") -> MissingDependencyError:
    """The one instruction for an embedder whose library is missing."""
    return MissingDependencyError(f"the embedder '{label}' needs sentence-transformers ({why}); install it with: "
                                  f"{catalogue.EMBED_INSTALL}")


def _has_sentence_transformers() -> bool:
    if "sentence_transformers" in sys.modules:
        return sys.modules["sentence_transformers"] is not None
    try:
        return importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        return False


def get_embedder(spec: str | None = None, device: str | None = None) -> Embedder:
    """An embedder from a catalogue name (default minilm-l6), 'fake', a sentence-transformers folder, or
    'BACKEND:MODEL' for a backend registered in judges/registry.py (sentence-transformers, fake, or a plugin's: entry
    point group localragas.embedders, a factory(MODEL, options) -> Embedder). A missing sentence-transformers or model
    package is refused here, before any sample is judged, with the one command that installs both
    (catalogue.EMBED_INSTALL)."""
    from ..core.plugins import PluginError  # noqa: PLC0415
    from .registry import EMBEDDER_BACKENDS  # noqa: PLC0415

    spec = spec or catalogue.DEFAULT_EMBEDDER
    backend, sep, target = spec.partition(":")
    factory = EMBEDDER_BACKENDS.factory(backend) if sep else None
    if factory is None:  # a plain name or folder (a Windows path's drive letter is no backend either)
        backend, target = ("fake", "") if spec == "fake" else ("sentence-transformers", spec)
        factory = EMBEDDER_BACKENDS.built(backend)
    embedder = factory(target, {"device": device} if device else {})
    if not isinstance(embedder, Embedder):
        raise PluginError(f"the {backend!r} embedder plugin (entry point group localragas.embedders) made a "
                          f"{type(embedder).__name__}, not a localragas Embedder")
    return embedder


# --- the built-in backends' factories, factory(model, options) -> Embedder as a plugin's (judges/registry.py) --------


def fake(target: str, options: dict[str, Any]) -> Embedder:
    """Hashed bag-of-words vectors: no model (`--embedder fake`)."""
    return HashingEmbedder()


def sentence_transformers(target: str, options: dict[str, Any]) -> Embedder:
    """A catalogue embedder or a sentence-transformers folder; options: `device` (default: CUDA when there is one)."""
    device = options.get("device")
    if target in catalogue.CATALOGUE:
        if catalogue.spec(target).role != "embedder":
            raise ConfigError(f"'{target}' is a judge model, not an embedder")
        if not _has_sentence_transformers():
            raise _missing(target)
        return SentenceTransformerEmbedder(catalogue.path(target), target, device)
    folder = Path(target).expanduser()
    if folder.is_dir():
        if not _has_sentence_transformers():
            raise _missing(folder.name)
        return SentenceTransformerEmbedder(folder, folder.name, device)
    embedders = [n for n, m in catalogue.CATALOGUE.items() if m.role == "embedder"]
    raise ConfigError(f"unknown embedder '{target}'; valid: {', '.join(embedders)}, fake, or a sentence-transformers "
                      "folder")
