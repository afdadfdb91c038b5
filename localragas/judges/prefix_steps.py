"""Graded verdicts with the shared prefix evaluated once per sample, deterministically.

A graded prompt (verify_statement, judge_chunk) is cut into segments: the chat template's head and the system
prompt; the data every item of a sample shares (the contexts, or the question and reference); the item being judged
and the reply line. Each segment is evaluated as its own step (`eval` of exactly that segment's tokens, in its own
batches), so the KV state after a segment depends only on the segments before it, never on what ran before:

- the next item of the same sample truncates the context back to the end of the shared segments and evaluates only
  its own segment;
- a prefix seen earlier but since overwritten (faithfulness and context recall check claims against the same
  contexts, with other calls in between) is restored from a saved KV state;
- a prefix never seen is evaluated and its state saved.

Computed, kept or restored, the KV bytes after the prefix are the same, so P(yes) is identical run to run
(tests/real/test_pipeline_smollm2.py::test_same_input_same_scores) while each sample's contexts are evaluated once.

This module holds the bookkeeping only; the model operations come from a `Steps` object (judges/llama_steps.py for
llama-cpp-python, a recording fake in the tests).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol, Sequence

Tokens = tuple[int, ...]


class Steps(Protocol):
    """What a backend must do for PrefixSteps."""

    def n_tokens(self) -> int: ...  # tokens in the context now

    def tokens_in_context(self, n: int) -> Tokens: ...  # the first n of them

    def truncate(self, n: int) -> None: ...  # keep the first n tokens' KV state, drop the rest

    def evaluate(self, tokens: Tokens) -> None: ...  # one step: these tokens on top of the context

    def save(self) -> bytes: ...  # the KV state of the whole context

    def restore(self, state: bytes, tokens: Tokens) -> bool: ...  # replace the context by a saved state

    def last_logits(self): ...  # next-token logits after the last evaluated token


@dataclass
class StepResult:
    prompt_tokens: int  # tokens of the whole prompt
    reused_tokens: int  # of those, tokens whose KV state was kept or restored instead of evaluated
    restored: bool  # a saved state was loaded


class PrefixSteps:
    """Evaluate segmented prompts, reusing the longest prefix of whole segments already in the context or saved."""

    def __init__(self, steps: Steps, capacity_bytes: int):
        self.steps = steps
        self.capacity = capacity_bytes
        self._in_context: list[Tokens] = []  # the segments now in the context, each evaluated as its own step
        # saved KV states, LRU: key (the segments, or a JSON call's tokens as one segment) -> (tokens, state)
        self._saved: OrderedDict[tuple[Tokens, ...], tuple[Tokens, bytes]] = OrderedDict()
        self._saved_bytes = 0

    def forget(self) -> None:
        """Something else used the context (a JSON call): what is in it is no longer known to be steps."""
        self._in_context = []

    def _kept(self, segments: Sequence[Tokens]) -> int:
        """How many leading segments (all but the last) are in the context as steps."""
        k = 0
        while k < min(len(self._in_context), len(segments) - 1) and self._in_context[k] == segments[k]:
            k += 1
        boundary = sum(len(s) for s in segments[:k])
        if k and (self.steps.n_tokens() < boundary
                  or self.steps.tokens_in_context(boundary) != tuple(t for s in segments[:k] for t in s)):
            return 0  # the context changed behind our back: trust nothing in it
        return k

    def _save(self, key: tuple[Tokens, ...]) -> None:
        if key in self._saved:
            self._saved.move_to_end(key)
            return
        if self.capacity <= 0:
            return
        state = self.steps.save()
        if len(state) > self.capacity:
            return
        self._saved[key] = (tuple(t for s in key for t in s), state)
        self._saved_bytes += len(state)
        while self._saved_bytes > self.capacity:
            _, (_, old) = self._saved.popitem(last=False)
            self._saved_bytes -= len(old)

    # --- calls that evaluate their prompt their own way (constrained JSON generation) ------------------------------

    def before_call(self, tokens: Tokens, min_gain: int = 32) -> int:
        """A call is about to evaluate `tokens` itself, reusing what the context holds of them: first restore the
        saved state sharing the longest prefix with them, when it shares at least `min_gain` tokens more than the
        context does. Returns the tokens the context now shares with `tokens`."""
        self.forget()
        here = _common(self.steps.tokens_in_context(self.steps.n_tokens()), tokens)
        best, best_key = here, None
        for key, (flat, _) in self._saved.items():
            n = _common(flat, tokens)
            if n > best:
                best, best_key = n, key
        if best_key is not None and best - here >= min_gain:
            flat, state = self._saved[best_key]
            if self.steps.restore(state, flat):
                self._saved.move_to_end(best_key)
                return best
            return 0
        return here

    def after_call(self) -> None:
        """Save the context (a JSON call's prompt and reply) for later calls that share its prefix."""
        self._save((self.steps.tokens_in_context(self.steps.n_tokens()),))

    def run(self, segments: Sequence[Tokens]):
        """Evaluate the prompt made of `segments` (the last one: the item judged); return (logits, StepResult)."""
        segments = [tuple(s) for s in segments if s]
        if not segments:
            raise ValueError("an empty prompt")
        kept = self._kept(segments)
        start, restored = kept, False
        for j in range(len(segments) - 1, kept, -1):  # the deepest saved prefix beyond what the context holds
            key = tuple(segments[:j])
            if key in self._saved:
                flat, state = self._saved[key]
                if self.steps.restore(state, flat):
                    self._saved.move_to_end(key)
                    start, restored = j, True
                break
        if not restored:
            self.steps.truncate(sum(len(s) for s in segments[:kept]))
        self._in_context = list(segments[:start])
        for j in range(start, len(segments)):
            self.steps.evaluate(segments[j])
            self._in_context.append(segments[j])
            if j < len(segments) - 1:
                self._save(tuple(segments[:j + 1]))
        total = sum(len(s) for s in segments)
        reused = sum(len(s) for s in segments[:start])
        return self.steps.last_logits(), StepResult(total, reused, restored)


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
