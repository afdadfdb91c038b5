"""A judge's identity is the sha256 of its model file on disk: a changed file gets a new fingerprint (no shared
cache entries), a catalogue file that is not the pinned one is refused, and a file is hashed once per version."""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from localragas.judges import catalogue
from localragas.core.errors import ModelIntegrityError
from localragas.judges import get_judge
from localragas.judges import llamacpp
from localragas.judges import transformers_judge as tj
from localragas.judges.cache import cache_key
from localragas.core.reply_schemas import Claims, schema_text
from localragas.prompts import Prompt

from cli_helpers import cli

HEADER = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") * 2  # magic, version 3, no tensors


def never(*a, **k):
    raise AssertionError("no model may be loaded here")


@pytest.fixture(autouse=True)
def no_llama_cpp(monkeypatch):
    """llama_cpp replaced: building a judge imports it, and nothing here may load a model."""
    monkeypatch.setattr(llamacpp, "_import_llama", lambda: type("FakeLlamaCpp", (), {"Llama": staticmethod(never)}))


def gguf(p: Path, body: bytes, mtime_ns: int | None = None) -> Path:
    """A small file with a well-formed GGUF header; same size for same-size bodies, a chosen mtime if given."""
    p.write_bytes(HEADER + body)
    if mtime_ns is not None:
        os.utime(p, ns=(mtime_ns, mtime_ns))
    return p


def pin(monkeypatch, models_dir: Path, name: str, genuine: bytes) -> Path:
    """The catalogue judge `name` pinned to a small genuine file, written to the models folder."""
    p = models_dir / catalogue.spec(name).filename
    gguf(p, genuine)
    m = replace(catalogue.spec(name), size=p.stat().st_size, sha256=catalogue.sha256_of(p))
    monkeypatch.setitem(catalogue.CATALOGUE, name, m)
    return p


def counted_hashes(monkeypatch) -> list[Path]:
    calls: list[Path] = []
    real = catalogue.sha256_of
    monkeypatch.setattr(catalogue, "sha256_of", lambda p: calls.append(p) or real(p))
    return calls


def new_process(monkeypatch) -> None:
    """What a new process knows of file hashes: only `.localragas/file-hashes.json`."""
    monkeypatch.setattr(catalogue, "_SEEN", {})


PROMPT = Prompt("extract_claims", "The sky is blue.")


def test_a_changed_gguf_gets_a_new_fingerprint_and_shares_no_cache_entries(tmp_path):
    p = gguf(tmp_path / "own.gguf", b"A" * 64, mtime_ns=1_000_000_000_000_000_000)
    first = get_judge(str(p))
    gguf(p, b"B" * 64, mtime_ns=1_000_000_001_000_000_000)  # same size, same header, other weights
    second = get_judge(str(p))
    assert first.sha256 == hashlib.sha256(HEADER + b"A" * 64).hexdigest()
    assert second.sha256 == catalogue.sha256_of(p) != first.sha256
    assert second.fingerprint.startswith(second.sha256 + ":")
    assert first.fingerprint != second.fingerprint
    schema = schema_text(Claims)
    assert cache_key(first.fingerprint, schema, PROMPT) != cache_key(second.fingerprint, schema, PROMPT)


def test_a_changed_gguf_gets_a_new_sha256_under_transformers(monkeypatch, tmp_path):
    monkeypatch.setattr(tj, "_require", lambda gguf: None)
    p = gguf(tmp_path / "own.gguf", b"A" * 64, mtime_ns=1_000_000_000_000_000_000)
    first = get_judge(f"transformers:{p}")
    gguf(p, b"B" * 64, mtime_ns=1_000_000_001_000_000_000)
    assert get_judge(f"transformers:{p}").sha256 == catalogue.sha256_of(p) != first.sha256


def test_the_hash_is_not_recomputed_while_size_and_mtime_match(monkeypatch, tmp_path):
    p = gguf(tmp_path / "own.gguf", b"A" * 64)
    calls = counted_hashes(monkeypatch)
    fingerprint = get_judge(str(p)).fingerprint
    assert get_judge(str(p)).fingerprint == fingerprint and len(calls) == 1
    new_process(monkeypatch)
    assert get_judge(str(p)).fingerprint == fingerprint and len(calls) == 1  # from .localragas/file-hashes.json
    os.utime(p, ns=(1_000_000_000_000_000_000,) * 2)
    assert get_judge(str(p)).fingerprint == fingerprint and len(calls) == 2  # new mtime: hashed again


def test_an_unwritable_hash_store_only_costs_a_hash_per_process(monkeypatch, tmp_path):
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(blocker))
    p = gguf(tmp_path / "own.gguf", b"A" * 64)
    calls = counted_hashes(monkeypatch)
    digest = catalogue.file_sha256(p)
    assert catalogue.file_sha256(p) == digest and len(calls) == 1
    new_process(monkeypatch)
    assert catalogue.file_sha256(p) == digest and len(calls) == 2


def test_a_genuine_catalogue_judge_is_fingerprinted_by_its_file(monkeypatch, models_dir):
    p = pin(monkeypatch, models_dir, "smollm2-135m", b"genuine weights")
    judge = get_judge("smollm2-135m")
    assert judge.model_path == p and judge.sha256 == catalogue.spec("smollm2-135m").sha256 == catalogue.sha256_of(p)
    assert judge.fingerprint.startswith(judge.sha256 + ":")


@pytest.mark.parametrize("spec", ["smollm2-135m", "transformers:smollm2-135m"])
def test_a_catalogue_model_with_other_bytes_is_refused(monkeypatch, models_dir, spec):
    p = pin(monkeypatch, models_dir, "smollm2-135m", b"genuine weights")
    pinned = catalogue.spec("smollm2-135m").sha256
    gguf(p, b"tampered weight", mtime_ns=1_000_000_000_000_000_000)  # same size and header
    with pytest.raises(ModelIntegrityError) as e:
        get_judge(spec)
    msg = str(e.value)
    assert msg.startswith(f"{p}: sha256 {catalogue.sha256_of(p)} does not match the pinned {pinned}")
    assert "localragas models pull smollm2-135m" in msg and "localragas models verify smollm2-135m" in msg


def test_eval_with_a_tampered_catalogue_model_exits_2_naming_the_file_and_the_fix(monkeypatch, models_dir, data):
    p = pin(monkeypatch, models_dir, "smollm2-135m", b"genuine weights")
    gguf(p, b"tampered weight", mtime_ns=1_000_000_000_000_000_000)
    r = cli("eval", str(data), "--judge", "smollm2-135m", "--no-progress", "--no-resume")
    assert r.exit_code == 2, r.output
    assert f"Error: {p}: sha256 {catalogue.sha256_of(p)} does not match the pinned" in r.output
    assert "localragas models pull smollm2-135m" in r.output and "Traceback" not in r.output


def test_a_file_changed_after_the_judge_was_built_is_not_loaded(monkeypatch, models_dir):
    p = pin(monkeypatch, models_dir, "smollm2-135m", b"genuine weights")
    judge = get_judge("smollm2-135m")  # fingerprinted; the model is loaded on the first call
    gguf(p, b"tampered weight", mtime_ns=1_000_000_000_000_000_000)
    with pytest.raises(ModelIntegrityError, match="changed since the judge was set up"):
        judge.llm  # Llama is never called: `never` would fail the test
