"""The transformers judge without a model: options, specs, dependency errors, file hashing, the JSON grammar and the
device choice. Decoding, truncation, token counts and batching on a tiny random model:
tests/real/test_transformers_tiny.py."""
from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

from localragas.judges import catalogue
from localragas.core.errors import ConfigError, MissingDependencyError, ModelIntegrityError, ModelNotFoundError
from localragas.judges import BACKENDS, get_judge
from localragas.judges import transformers_judge as tj
from localragas.core.reply_schemas import Claims, schema_text

HAVE_DEPS = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "xgrammar"))
needs_deps = pytest.mark.skipif(not HAVE_DEPS, reason="needs the transformers extra: pip install 'localragas[transformers]'")


def _gguf(path, body=(3).to_bytes(4, "little") + b"\0" * 60):  # version 3: a well-formed header
    path.write_bytes(b"GGUF" + body)
    return path


# --- options and specs (no model, no torch) ----------------------------------------------------------------------


def test_transformers_is_a_registered_backend():
    assert "transformers" in BACKENDS
    with pytest.raises(ConfigError, match="transformers"):
        get_judge("bogus")


def test_unknown_option_is_a_config_error_listing_the_valid_ones():
    with pytest.raises(ConfigError) as e:
        get_judge("transformers:smollm2-135m", {"n_ctx": 4096})
    msg = str(e.value)
    assert "n_ctx" in msg
    for name in ("device", "dtype", "max_new_tokens", "temperature", "seed", "batch_size"):
        assert name in msg


@pytest.mark.parametrize("options", [{"device": "tpu"}, {"dtype": "int8"}, {"max_new_tokens": 4},
                                     {"temperature": -1}, {"batch_size": 0}])
def test_bad_option_values_are_config_errors(options):
    with pytest.raises(ConfigError, match=next(iter(options))):
        get_judge("transformers:smollm2-135m", options)


def test_settings_defaults():
    s = tj.TransformersSettings()
    assert (s.device, s.dtype, s.max_new_tokens, s.temperature, s.seed) == ("auto", "auto", 1024, 0.0, 42)
    assert tj.TransformersSettings(max_new_tokens="64").max_new_tokens == 64  # CLI values arrive as strings


def test_missing_target_names_what_is_accepted(tmp_path):
    with pytest.raises(ConfigError, match="neither a catalogue model .* a model folder nor a .gguf file"):
        get_judge("transformers:nothing")
    with pytest.raises(ModelNotFoundError, match="judge model file or folder not found: .*nothing"):
        get_judge(f"transformers:{tmp_path / 'nothing'}")


def test_folder_without_config_or_weights_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no config.json"):
        get_judge(f"transformers:{tmp_path}")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match="safetensors"):
        get_judge(f"transformers:{tmp_path}")


def test_file_that_is_not_gguf_is_refused(tmp_path):
    p = tmp_path / "m.gguf"
    p.write_bytes(b"NOPE" + b"\0" * 16)
    with pytest.raises(ModelIntegrityError, match="is not a GGUF model file"):
        get_judge(f"transformers:{p}")


def test_embedder_is_not_a_judge():
    with pytest.raises(ConfigError, match="not a judge"):
        get_judge(f"transformers:{catalogue.DEFAULT_EMBEDDER}")


@pytest.mark.parametrize("missing", ["torch", "transformers", "xgrammar", "gguf", "accelerate"])
def test_missing_dependency_names_the_pip_command(monkeypatch, tmp_path, missing):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))
    with pytest.raises(MissingDependencyError) as e:
        get_judge(f"transformers:{_gguf(tmp_path / 'm.gguf')}")
    assert missing in str(e.value) and "pip install 'localragas[transformers]'" in str(e.value)


@needs_deps
def test_folder_does_not_need_gguf(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"w")
    judge = get_judge(f"transformers:{tmp_path}")
    assert not judge.gguf and judge.name == f"transformers/{tmp_path.name}"


def test_catalogue_name_resolves_to_its_gguf_with_the_sha256_of_the_file(monkeypatch, tmp_path):
    monkeypatch.setattr(tj, "_require", lambda gguf: None)
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, str(tmp_path))
    m = catalogue.spec("smollm2-135m")
    p = _gguf(tmp_path / m.filename)
    monkeypatch.setitem(catalogue.CATALOGUE, m.name, replace(m, size=p.stat().st_size, sha256=catalogue.sha256_of(p)))
    judge = get_judge("transformers:smollm2-135m")
    assert judge.source == p and judge.gguf
    assert judge.sha256 == catalogue.sha256_of(p) == catalogue.spec("smollm2-135m").sha256
    assert judge.name == "transformers/smollm2-135m"
    assert judge._model is None  # lazy: nothing loaded yet


# --- file hashes: computed once per file version ----------------------------------------------------------------


def test_file_sha256_is_cached_by_path_size_and_mtime(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    f = tmp_path / "w.safetensors"
    f.write_bytes(b"weights")
    calls = []
    real = catalogue.sha256_of
    monkeypatch.setattr(catalogue, "sha256_of", lambda p: calls.append(p) or real(p))
    first = catalogue.file_sha256(f)
    assert first == real(f) and catalogue.file_sha256(f) == first and len(calls) == 1
    f.write_bytes(b"other weights")  # new size and mtime: hashed again
    assert catalogue.file_sha256(f) == real(f) != first and len(calls) == 2


def test_hugging_face_cache_blob_names_are_their_sha256(tmp_path):
    digest = "a" * 64
    blob = tmp_path / digest
    blob.write_bytes(b"not hashed")
    link = tmp_path / "model.safetensors"
    link.symlink_to(blob)
    assert catalogue.file_sha256(link) == digest


def test_folder_sha256_covers_weights_config_and_tokenizer(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    m = tmp_path / "m"
    m.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "README.md"):
        (m / name).write_text(name)
    before = catalogue.model_folder_sha256(m)
    (m / "README.md").write_text("edited")
    assert catalogue.model_folder_sha256(m) == before
    (m / "tokenizer.json").write_text("another tokenizer")
    assert catalogue.model_folder_sha256(m) != before


@needs_deps
def test_json_strings_exclude_control_characters():
    """xgrammar's length-bounded strings admit a raw tab (invalid JSON); json_grammar closes that hole."""
    import xgrammar as xgr

    info = xgr.TokenizerInfo([chr(c) for c in range(32, 127)] + ["\t", "<eos>"], stop_token_ids=[96])
    grammar = xgr.GrammarCompiler(info).compile_grammar(tj.json_grammar(schema_text(Claims)))
    ok, bad = xgr.GrammarMatcher(grammar), xgr.GrammarMatcher(grammar)
    assert ok.accept_string('{"claims": ["a b"]}') and ok.is_completed()
    assert not bad.accept_string('{"claims": ["a\tb"]}')


@needs_deps
def test_device_choice_on_a_cpu_only_machine():
    import torch

    from localragas.judges.transformers_device import resolve_device

    assert resolve_device("cpu", "auto") == ("cpu", "float32")
    assert resolve_device("cpu", "bfloat16") == ("cpu", "bfloat16")
    if not torch.cuda.is_available():
        assert resolve_device("auto", "auto") in (("cpu", "float32"), ("mps", "bfloat16"))
        with pytest.raises(ConfigError, match="device=cuda but torch .* sees no CUDA device"):
            resolve_device("cuda", "auto")
