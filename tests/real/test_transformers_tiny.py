"""The transformers judge on a tiny random Llama built here (no download): grammar-constrained decoding gives
schema-valid replies, deterministic and fingerprinted; the top next tokens come as data and the judging layer reads
them; a token limit before the JSON closes is a truncation, a prompt longer than the context a judge error;
generate_many and concurrent callers batch rows, and a failing batch reaches every waiting caller. (Its options,
specs, dependency errors and file hashes need no model: tests/fast/judges/test_transformers_judge.py; the real
SmolLM2 through this backend: test_transformers_real.py.)"""
from __future__ import annotations

import importlib.util
from typing import Annotated

import pytest
from pydantic import Field, StringConstraints

from localragas.core.errors import JudgeError
from localragas.core.reply_schemas import Output, verdicts_for
from localragas.judges import Judging, catalogue, get_judge
from localragas.prompts import Prompt


class Tiny(Output):
    """A small bounded schema a random model closes quickly."""

    flag: bool
    words: list[Annotated[str, StringConstraints(max_length=6)]] = Field(max_length=2)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    if not all(importlib.util.find_spec(m) for m in ("torch", "transformers", "xgrammar")):
        pytest.fail("the transformers extra is missing (SETUP_EXTRAS=test bash scripts/setup.sh installs it)")
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


def test_tiny_model_is_deterministic_and_fingerprinted(tiny_judge, tiny_model):
    a, b = tiny_judge(), tiny_judge()
    assert Judging(a).generate(PROMPT, Tiny) == Judging(b).generate(PROMPT, Tiny)
    assert a.fingerprint == b.fingerprint and a.fingerprint.startswith(catalogue.model_folder_sha256(tiny_model))
    assert tiny_judge(max_new_tokens=64).fingerprint != a.fingerprint
    assert tiny_judge(batch_size=2, n_threads=2).fingerprint == a.fingerprint  # speed settings do not change replies


def test_token_limit_before_the_json_closes_is_a_truncation(tiny_judge):
    judge = tiny_judge(max_new_tokens=16)
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="truncated"):
        judging.generate(PROMPT, verdicts_for(3))
    assert judging.stats.failed_calls == 1 and judging.stats.parse_failures == 0
    assert judging.log.records[-1]["completion_tokens"] == 16


def test_prompt_longer_than_the_context_is_a_judge_error(tiny_judge):
    judge = tiny_judge()
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="context of 2048 tokens"):
        judging.generate(Prompt("verify_statements", "x" * 2000), Tiny)
    with pytest.raises(JudgeError, match="truncated"):  # fits, but no room left to close the JSON
        judging.generate(Prompt("verify_statements", "x" * 1700), verdicts_for(3))


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


def test_a_failing_batch_reaches_every_waiting_caller(tiny_judge):
    judge = tiny_judge()
    judging = Judging(judge)
    judge._load()
    judge._run = lambda rows: (_ for _ in ()).throw(RuntimeError("out of memory"))
    with pytest.raises(RuntimeError, match="out of memory"):
        judging.generate(PROMPT, Tiny)
    assert judge._batches.waiting == [] and not judge._batches.lock.locked()
