"""Graded prompts evaluated in steps (judges/prefix_steps.py): where each graded prompt is cut, and a recording fake
of the model operations proving that a sample's shared prefix is evaluated once, then kept or restored."""
from __future__ import annotations

from importlib.metadata import version

import pytest

from localragas.judges.llama_steps import CHECKED_VERSION
from localragas.judges.prefix_steps import PrefixSteps
from localragas.prompts import judge_chunk, verify_statement
from localragas.prompts.base import ONE_WORD, SHORT_REMINDER, tagged

CONTEXTS = ["Acme offers three storage tiers: Standard, Infrequent Access and Archive.",
            "The Archive tier restores data within 12 hours."]
CLAIMS = ["Acme offers Standard.", "Archive restores in 12 hours.", "It is free.", "Acme 提供三种存储层。"]


# --- where the graded prompts are cut ------------------------------------------------------------------------------


@pytest.mark.parametrize("make, items", [
    (lambda item: verify_statement(item, CONTEXTS), CLAIMS),
    (lambda item: judge_chunk("Which tiers?", "Three tiers.", "reference answer", item), CONTEXTS),
    (lambda item: judge_chunk("Which tiers?", "", "question", item), CONTEXTS),
])
def test_the_judged_item_lies_wholly_after_the_split_and_the_prefix_is_shared(make, items):
    prompts = [make(item) for item in items]
    for prompt, item in zip(prompts, items):
        (cut,) = prompt.splits
        assert item in prompt.user[cut:] and item not in prompt.user[:cut]
    english = {(q.system, q.user[:q.splits[0]]) for q, item in zip(prompts, items) if item.isascii()}
    assert len(english) == 1  # byte-identical across the sample's items (a Chinese claim has its own instructions)


@pytest.mark.parametrize("prompt, tag, item, instruction", [
    (judge_chunk("Which tiers?", "Three tiers.", "reference answer", CONTEXTS[1]), "context", CONTEXTS[1],
     "Decide whether the context was useful"),
    (judge_chunk("Which tiers?", "", "question", CONTEXTS[1]), "context", CONTEXTS[1], "Decide whether the context"),
])
def test_a_chunk_call_evaluates_only_its_chunk_the_short_reminder_and_the_reply_line(prompt, tag, item, instruction):
    """The instruction is read once a sample, in the shared prefix; what each item's call evaluates is fixed."""
    (cut,) = prompt.splits
    assert instruction in prompt.user[:cut]
    assert prompt.user[cut:] == f"{tagged(tag, item)}\n\n{SHORT_REMINDER['en']}\n{ONE_WORD['en']}"


def test_the_contexts_are_in_the_shared_prefix():
    prompt = verify_statement("It is free.", CONTEXTS)
    assert all(c in prompt.user[:prompt.splits[0]] for c in CONTEXTS)


def test_llama_cpp_python_is_the_version_the_step_adapter_was_checked_with():
    """judges/llama_steps.py uses llama-cpp-python internals (Llama.eval, _ctx, state_seq_*): re-check them there,
    then update CHECKED_VERSION and scripts/setup.sh together."""
    pytest.importorskip("llama_cpp")
    assert version("llama-cpp-python") == CHECKED_VERSION


# --- the bookkeeping, against a recording fake --------------------------------------------------------------------


class RecordingSteps:
    """A context of tokens; each step's 'logits' are the tokens the model has seen (so a wrong reuse shows)."""

    def __init__(self):
        self.context: list[int] = []
        self.log: list[tuple] = []

    def n_tokens(self):
        return len(self.context)

    def tokens_in_context(self, n):
        return tuple(self.context[:n])

    def truncate(self, n):
        self.context = self.context[:n]
        self.log.append(("truncate", n))

    def evaluate(self, tokens):
        self.context.extend(tokens)
        self.log.append(("eval", tuple(tokens)))

    def save(self):
        return bytes(t % 256 for t in self.context)  # one byte a token: capacities below count tokens

    def restore(self, state, tokens):
        assert state == bytes(t % 256 for t in tokens)
        self.context = list(tokens)
        self.log.append(("restore", len(state)))
        return True

    def last_logits(self):
        return tuple(self.context)


SYSTEM, CTX_A, CTX_B = (1, 2), (10, 11, 12, 13), (20, 21, 22)


def test_the_second_item_keeps_the_prefix_and_evaluates_only_its_own_tokens():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    first, r1 = steps.run([SYSTEM, CTX_A, (31, 32)])
    assert fake.log == [("truncate", 0), ("eval", SYSTEM), ("eval", CTX_A), ("eval", (31, 32))]
    assert (r1.prompt_tokens, r1.reused_tokens) == (8, 0)
    fake.log.clear()
    second, r2 = steps.run([SYSTEM, CTX_A, (41,)])
    assert fake.log == [("truncate", 6), ("eval", (41,))]
    assert second == SYSTEM + CTX_A + (41,)
    assert (r2.prompt_tokens, r2.reused_tokens, r2.restored) == (7, 6, False)


def test_a_prefix_overwritten_by_other_calls_is_restored_not_recomputed():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    steps.run([SYSTEM, CTX_A, (31,)])
    steps.run([SYSTEM, CTX_B, (51,)])  # another prefix (context precision) …
    steps.forget()
    fake.context = [9, 9, 9]  # … and a JSON call that rewrote the context
    fake.log.clear()
    logits, r = steps.run([SYSTEM, CTX_A, (32,)])
    assert fake.log == [("restore", 6), ("eval", (32,))]
    assert logits == SYSTEM + CTX_A + (32,)
    assert (r.reused_tokens, r.restored) == (6, True)


def test_the_system_segment_alone_is_restored_for_a_new_sample():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    steps.run([SYSTEM, CTX_A, (31,)])
    fake.log.clear()
    logits, r = steps.run([SYSTEM, CTX_B, (61,)])
    assert fake.log == [("truncate", 2), ("eval", CTX_B), ("eval", (61,))]
    assert logits == SYSTEM + CTX_B + (61,)


def test_the_same_prompt_twice_evaluates_its_item_again():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    steps.run([SYSTEM, CTX_A, (31,)])
    fake.log.clear()
    steps.run([SYSTEM, CTX_A, (31,)])
    assert fake.log == [("truncate", 6), ("eval", (31,))]


def test_a_context_changed_behind_its_back_is_not_trusted():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 0)  # no saved states
    steps.run([SYSTEM, CTX_A, (31,)])
    fake.context = [1, 2, 99]  # rewritten without forget()
    fake.log.clear()
    logits, r = steps.run([SYSTEM, CTX_A, (32,)])
    assert fake.log[0] == ("truncate", 0) and r.reused_tokens == 0
    assert logits == SYSTEM + CTX_A + (32,)


def test_saved_states_stay_within_the_capacity():
    """Only KV bytes are saved (llama-cpp-python's LlamaRAMCache copied up to 512 rows of logits with each state and
    counted only the KV bytes: an eval of 9 metrics once grew past 24 GB with it)."""
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 12)  # bytes: room for the states of a few short prefixes
    for k in range(20):
        steps.run([SYSTEM, (100 + k, 101 + k, 102 + k), (7,)])
        assert steps._saved_bytes <= 12
        steps.before_call((1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13))
        fake.context = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
        steps.after_call()  # 13 bytes: more than the whole capacity, never kept
        assert steps._saved_bytes <= 12
    assert steps._saved  # the most recent ones are kept


# --- calls that evaluate their prompt their own way (JSON generation) ------------------------------------------------


def test_a_json_call_gets_the_saved_state_sharing_the_longest_prefix():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    json_prompt = SYSTEM + CTX_A + tuple(range(200, 240))
    fake.context = list(json_prompt + (300, 301))  # an earlier JSON call: its prompt and reply
    steps.after_call()
    steps.run([SYSTEM, CTX_B, (51,)])  # graded calls of another sample since
    fake.log.clear()
    shared = steps.before_call(json_prompt[:-1] + (999,), min_gain=8)
    assert fake.log == [("restore", len(json_prompt) + 2)] and shared == len(json_prompt) - 1


def test_a_json_call_keeps_the_context_when_a_saved_state_gains_little():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 1 << 20)
    fake.context = list(SYSTEM + CTX_A + (5,))
    steps.after_call()
    fake.context = list(SYSTEM + CTX_A[:3])
    fake.log.clear()
    assert steps.before_call(SYSTEM + CTX_A + (6,), min_gain=32) == 5
    assert fake.log == []  # one more token is not worth a restore


def test_after_a_json_call_the_graded_steps_trust_nothing_in_the_context():
    fake = RecordingSteps()
    steps = PrefixSteps(fake, 0)
    steps.run([SYSTEM, CTX_A, (31,)])
    steps.before_call(SYSTEM + CTX_A + (31,))  # the JSON call may evaluate the same tokens in other batches
    fake.log.clear()
    steps.run([SYSTEM, CTX_A, (32,)])
    assert fake.log[0] == ("truncate", 0)


# --- the llama.cpp judge's next-token read, on a stub model --------------------------------------------------------


VOCAB = ["yes", "{", " No", "no"] + [f"t{i}" for i in range(30)]  # more than the 20 candidates asked


class LogitSteps(RecordingSteps):
    """The prompt cut as the step adapter cuts it (the system text, the shared data, the item); the logits a next
    token distribution of P(yes) 0.5, '{' 0.2, ' No' 0.2, 'no' 0.1 (the rest next to nothing)."""

    def segments(self, prompt):
        cut = prompt.splits[0]
        return [tuple(map(ord, prompt.system[:8])), tuple(map(ord, prompt.user[:cut])), tuple(map(ord, prompt.user[cut:]))]

    def last_logits(self):
        import numpy as np

        return np.log(np.array([0.5, 0.2, 0.2, 0.1] + [1e-30] * 30))


class StubLlm:
    def detokenize(self, tokens):
        return "".join(VOCAB[t] for t in tokens).encode("utf-8")


def stub_llama_judge():
    import threading

    from localragas.judges.llamacpp import LlamaCppJudge

    judge = LlamaCppJudge.__new__(LlamaCppJudge)  # no model file, no llama_cpp: the model objects stubbed
    judge._model_lock, judge._llm = threading.Lock(), StubLlm()
    judge._steps = PrefixSteps(LogitSteps(), 1 << 20)
    judge.name, judge.fingerprint = "llamacpp/stub", "stub"
    return judge


def test_the_llama_cpp_judge_gives_its_top_next_tokens_and_the_judging_layer_reads_p_yes():
    from localragas.judges import Judging
    from localragas.judges.yes_no import YES_NO

    judge = stub_llama_judge()
    first, second = (verify_statement(c, CONTEXTS) for c in CLAIMS[:2])
    top = judge.next_tokens(first, YES_NO)
    assert [t for t, _ in top.candidates[:4]] == ["yes", "{", " No", "no"] and len(top.candidates) == 20
    assert top.prompt_tokens == len(first.system[:8]) + len(first.user) and top.completion_tokens == 1
    judging = Judging(judge)
    assert judging.p_yes(second) == round(0.5 / 0.8, 6)  # " No" and "no" pooled
    shared = len(second.system[:8]) + second.splits[0]
    assert judging.log.records[-1]["cached_tokens"] == shared  # the prefix kept from the first call
    assert (judging.stats.completion_tokens, judging.stats.cached_tokens) == (1, shared)
