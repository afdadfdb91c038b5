"""The transformers judge: options, specs, dependency errors, file hashing, and (with a tiny random model built
here, no download) grammar-constrained decoding, truncation, token counts and batched generation."""
from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import Annotated

import pytest
from pydantic import Field, StringConstraints

from localragas.judges import catalogue
from localragas.core.errors import ConfigError, JudgeError, MissingDependencyError, ModelIntegrityError, ModelNotFoundError
from localragas.judges import BACKENDS, Judging, get_judge
from localragas.judges import transformers_judge as tj
from localragas.core.reply_schemas import Claims, Output, schema_text, verdicts_for
from localragas.prompts import Prompt

HAVE_DEPS = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "xgrammar"))
needs_deps = pytest.mark.skipif(not HAVE_DEPS, reason="needs the transformers extra: pip install 'localragas[transformers]'")


class Tiny(Output):
    """A small bounded schema a random model closes quickly."""

    flag: bool
    words: list[Annotated[str, StringConstraints(max_length=6)]] = Field(max_length=2)


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


# --- a tiny random model (built in memory, saved as a safetensors folder) ---------------------------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    if not HAVE_DEPS:
        pytest.skip("needs the transformers extra")
    import torch
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from tokenizers import models as tok_models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<|im_start|>": 0, "<|im_end|>": 1}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    backend = Tokenizer(tok_models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                        chat_template=template)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                         bos_token_id=0, eos_token_id=1, tie_word_embeddings=True)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture()
def tiny_judge(tiny_model, tmp_path, monkeypatch):
    """Judges on the tiny model, one torch thread (fast on a busy machine); torch's thread count restored after."""
    import torch

    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    threads = torch.get_num_threads()
    judges = []

    def make(**options):
        judges.append(get_judge(f"transformers:{tiny_model}", {"device": "cpu", "n_threads": 1, **options}))
        return judges[-1]

    yield make
    for j in judges:
        j.close()
    torch.set_num_threads(threads)


PROMPT = Prompt("verify_statements", "Judge these statements.")


@needs_deps
def test_tiny_model_replies_are_schema_valid(tiny_judge):
    judge = tiny_judge()
    judging = Judging(judge)
    for output in (verdicts_for(3), verdicts_for(1), Tiny):
        reply = judging.generate(PROMPT, output)
        assert isinstance(reply, output)
    v = judging.generate(PROMPT, verdicts_for(3))
    assert [x.id for x in v.verdicts] == [1, 2, 3]
    assert judging.stats.failed_calls == 0 and judging.stats.parse_failures == 0
    log = judging.log.records[-1]
    assert log["prompt_tokens"] > len(PROMPT.user) and 40 < log["completion_tokens"] < judge.settings.max_new_tokens
    assert judge.describe()["settings"]["dtype"] == "float32"  # auto on CPU


@needs_deps
def test_tiny_model_gives_its_top_next_tokens_and_the_judging_layer_reads_them(tiny_judge):
    """Graded verdicts and rubrics through transformers: one forward pass, the top 20 next tokens as data (a
    log-softmax, best first); the judging layer reads the options' probabilities from them."""
    import math

    judge = tiny_judge()
    prompt = Prompt("rubric:tiny", "Which letter?")
    top = judge.next_tokens(prompt, ("a", "b"))
    logprobs = [lp for _, lp in top.candidates]
    assert len(top.candidates) == 20 and logprobs == sorted(logprobs, reverse=True) and logprobs[0] <= 0.0
    assert 0.0 < sum(math.exp(lp) for lp in logprobs) <= 1.0 + 1e-9
    assert top.prompt_tokens > len(prompt.user) and (top.completion_tokens, top.cached_tokens) == (1, 0)
    firsts = {}  # one byte a token: two letters (or digits) of the candidates as a rubric's options
    for t, lp in top.candidates:
        if t.isalnum() and t.lower() not in firsts and not any(o.lower() == t.lower() for o, _ in top.candidates
                                                                 if o != t):
            firsts[t.lower()] = (t, lp)
    letters = list(firsts.values())[:2]
    assert len(letters) == 2, top.candidates
    options = [t.lower() for t, _ in letters]
    got = Judging(judge).choice_probabilities(prompt, options)
    mass = sum(math.exp(lp) for _, lp in letters)
    assert got == {o: round(math.exp(lp) / mass, 6) for o, (_, lp) in zip(options, letters)}


@needs_deps
def test_tiny_model_is_deterministic_and_fingerprinted(tiny_judge, tiny_model):
    a, b = tiny_judge(), tiny_judge()
    assert Judging(a).generate(PROMPT, Tiny) == Judging(b).generate(PROMPT, Tiny)
    assert a.fingerprint == b.fingerprint and a.fingerprint.startswith(catalogue.model_folder_sha256(tiny_model))
    assert tiny_judge(max_new_tokens=64).fingerprint != a.fingerprint
    assert tiny_judge(batch_size=2, n_threads=2).fingerprint == a.fingerprint  # speed settings do not change replies


@needs_deps
def test_token_limit_before_the_json_closes_is_a_truncation(tiny_judge):
    judge = tiny_judge(max_new_tokens=16)
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="truncated"):
        judging.generate(PROMPT, verdicts_for(3))
    assert judging.stats.failed_calls == 1 and judging.stats.parse_failures == 0
    assert judging.log.records[-1]["completion_tokens"] == 16


@needs_deps
def test_prompt_longer_than_the_context_is_a_judge_error(tiny_judge):
    judge = tiny_judge()
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="context of 2048 tokens"):
        judging.generate(Prompt("verify_statements", "x" * 2000), Tiny)
    with pytest.raises(JudgeError, match="truncated"):  # fits, but no room left to close the JSON
        judging.generate(Prompt("verify_statements", "x" * 1700), verdicts_for(3))


@needs_deps
def test_generate_many_batches_and_matches_one_by_one(tiny_judge):
    prompts = [Prompt("verify_statements", f"Judge statement {i}.") for i in range(3)] + [PROMPT]
    single = tiny_judge()
    expected = [Judging(single).generate(p, verdicts_for(2)) for p in prompts]
    batched = tiny_judge(batch_size=3)
    runs = []
    real_run = batched._run
    batched._run = lambda rows: runs.append(len(rows)) or real_run(rows)
    judging = Judging(batched)
    got = batched.generate_many(prompts, verdicts_for(2), judging)
    assert runs == [3, 1]  # two model.generate calls for four prompts
    assert [type(g) for g in got] == [type(e) for e in expected]
    assert sum(g == e for g, e in zip(got, expected)) >= 3  # padding may flip a near-tie of a random model
    assert judging.stats.calls == 4 and len(judging.log.records) == 4


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
def test_concurrent_calls_from_threads_share_batches(tiny_judge):
    """`eval --concurrency N`: calls waiting for the model run together, each row with its own schema."""
    from concurrent.futures import ThreadPoolExecutor

    judge = tiny_judge(batch_size=4)
    judging = Judging(judge)
    assert judge.max_concurrency is None
    rows = []
    real_run = judge._run
    judge._run = lambda r: rows.append(len(r)) or real_run(r)
    outputs = [verdicts_for(1), verdicts_for(2), Tiny] * 3
    prompts = [Prompt("verify_statements", f"Judge statement {i}.") for i in range(len(outputs))]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(judging.generate, prompts, outputs))
    assert [type(g) for g in got] == outputs
    assert sum(rows) == len(outputs) and max(rows) > 1 and max(rows) <= 4
    assert judging.stats.calls == len(outputs) and judging.stats.failed_calls == 0


@needs_deps
def test_a_failing_batch_reaches_every_waiting_caller(tiny_judge):
    judge = tiny_judge()
    judging = Judging(judge)
    judge._load()
    judge._run = lambda rows: (_ for _ in ()).throw(RuntimeError("out of memory"))
    with pytest.raises(RuntimeError, match="out of memory"):
        judging.generate(PROMPT, Tiny)
    assert judge._batches.waiting == [] and not judge._batches.lock.locked()


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
