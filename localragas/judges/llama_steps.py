"""The llama-cpp-python internals that graded verdicts with prefix reuse need, kept in this one adapter.

Checked against llama-cpp-python 0.3.36 (CHECKED_VERSION; tests/fast/judges/test_prefix_steps.py fails when the
installed version differs, so an upgrade is re-checked here first). What it relies on:
- `Llama.eval(tokens)`: removes the KV cells from `n_tokens` on, then decodes `tokens` in batches of `n_batch`
  starting at the first of them; `Llama.n_tokens` and `Llama.input_ids` say what the context holds.
- `Llama._ctx.ctx` (the llama_context pointer) and `Llama._ctx.get_logits()` (the last evaluated token's logits).
- `llama_state_seq_get_size/get_data/set_data` on sequence 0: the KV state of the context, without logits.
- `Llama._model.vocab`, `LlamaGrammar._grammar/_root` (the GBNF text) and the sampler functions `llama_sampler_init_grammar/apply/accept/free`,
  `llama_vocab_is_eog`, `llama_token_data(_array)`: greedy decoding constrained by a grammar (`generate`).
- How `Llama.__init__` picks the chat format: the GGUF's `tokenizer.chat_template` through `Jinja2ChatFormatter`
  (added_special, so no extra BOS), unless it equals a built-in template (chatml, llama-3, mistral-instruct), whose
  formatter function is then used (BOS added at tokenisation). The same text as `create_chat_completion` renders.
"""
from __future__ import annotations

import ctypes

from ..prompts import Prompt
from .prefix_steps import Tokens

CHECKED_VERSION = "0.3.36"
SPLIT = "\ue000"  # a private-use character marking where a step begins in the rendered chat text
_BUILTIN_FORMATS = {"chatml": "format_chatml", "llama-3": "format_llama3", "mistral-instruct": "format_mistral_instruct"}


def chat_formatter(llm, llama_cpp):
    """The function that renders messages to chat text as `create_chat_completion` does; None when unknown (a
    custom chat handler, or a format this adapter was not checked with)."""
    fmt = llama_cpp.llama_chat_format
    if llm.chat_handler is not None:
        return None
    name = llm.chat_format
    if name in _BUILTIN_FORMATS:
        return getattr(fmt, _BUILTIN_FORMATS[name], None)
    if name == "chat_template.default" and "tokenizer.chat_template" in llm.metadata:
        def text(i: int) -> str:
            return llm._model.token_get_text(i) if i != -1 else ""

        return fmt.Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"], eos_token=text(llm.token_eos()),
                                       bos_token=text(llm.token_bos()))
    return None


class LlamaSteps:
    """`prefix_steps.Steps` for one llama_cpp.Llama (its own context, sequence 0)."""

    def __init__(self, llm, llama_cpp):
        self.llm = llm
        self.lib = llama_cpp
        self.formatter = chat_formatter(llm, llama_cpp)
        self._pieces: dict[int, bytes] = {}  # token -> its bytes

    # --- the prompt as steps ---------------------------------------------------------------------------------------

    def segments(self, prompt: Prompt) -> list[Tokens] | None:
        """The prompt's tokens, exactly as `create_chat_completion` would evaluate them, cut into steps: the template
        head and system prompt, then the user message up to each of `prompt.splits`, then the rest. A cut falls on
        the last token boundary at or before its character, so no token is split and the tokens are those of the
        whole text. None when this chat format cannot be cut (the caller then evaluates the prompt whole)."""
        if self.formatter is None or SPLIT in prompt.system or SPLIT in prompt.user:
            return None
        cuts = (0, *prompt.splits, len(prompt.user))
        user = SPLIT + SPLIT.join(prompt.user[a:b] for a, b in zip(cuts, cuts[1:]))
        rendered = self.formatter(messages=[{"role": "system", "content": prompt.system},
                                            {"role": "user", "content": user}])
        parts = rendered.prompt.split(SPLIT)
        if len(parts) != len(cuts):
            return None
        text = "".join(parts).encode("utf-8")
        add_bos = not getattr(rendered, "added_special", False)
        tokens = self.llm.tokenize(text, add_bos=add_bos, special=True)
        ends, at = [], 0  # byte offset in `text` where each token ends
        for i, t in enumerate(tokens):
            if not (i == 0 and add_bos and t == self.llm.token_bos()):  # the BOS added here is not in the text
                at += len(self._piece(t))
            ends.append(at)
        if at != len(text):
            return None  # pieces that do not add up to the text (a tokenizer that rewrites spaces): no cuts
        bounds, offset = [0], 0
        for part in parts[:-1]:
            offset += len(part.encode("utf-8"))
            k = bounds[-1]
            while k < len(tokens) and ends[k] <= offset:
                k += 1
            bounds.append(k)
        bounds.append(len(tokens))
        return [tuple(tokens[a:b]) for a, b in zip(bounds, bounds[1:])]

    def _piece(self, token: int) -> bytes:
        if token not in self._pieces:
            self._pieces[token] = self.llm.detokenize([token], special=True)
        return self._pieces[token]

    # --- prefix_steps.Steps ----------------------------------------------------------------------------------------

    def n_tokens(self) -> int:
        return self.llm.n_tokens

    def tokens_in_context(self, n: int) -> Tokens:
        return tuple(int(t) for t in self.llm.input_ids[:n])

    def truncate(self, n: int) -> None:
        self.llm.n_tokens = n  # the next eval() removes the KV cells from n on

    def evaluate(self, tokens: Tokens) -> None:
        if self.llm.n_tokens + len(tokens) > self.llm.n_ctx():
            raise ValueError(f"Requested tokens ({self.llm.n_tokens + len(tokens)}) exceed context window of "
                             f"{self.llm.n_ctx()}")
        self.llm.eval(list(tokens))

    def save(self) -> bytes:
        ctx = self.llm._ctx.ctx
        size = self.lib.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = self.lib.llama_state_seq_get_data(ctx, buf, size, 0)
        return ctypes.string_at(buf, written)

    def restore(self, state: bytes, tokens: Tokens) -> bool:
        ctx = self.llm._ctx.ctx
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not self.lib.llama_state_seq_set_data(ctx, buf, len(state), 0):
            self.llm.n_tokens = 0
            return False
        self.llm.input_ids[:len(tokens)] = tokens
        self.llm.n_tokens = len(tokens)
        return True

    def last_logits(self):
        import numpy as np  # noqa: PLC0415

        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),)).copy()

    # --- greedy decoding constrained by a grammar ------------------------------------------------------------------

    def generate(self, grammar, max_tokens: int) -> tuple[list[int], bool]:
        """Greedy decoding under a llama_cpp.LlamaGrammar, from the context as it stands (the prompt evaluated): the tokens
        generated, and whether the model ended (False: `max_tokens` ran out first).

        The most likely token is checked against the grammar alone; only when the grammar rejects it is the grammar
        applied to the whole vocabulary (as llama.cpp's own common sampler does). Greedy decoding picks the same
        token either way, since a grammar only removes candidates; llama-cpp-python applies the grammar to all
        151,936 candidates of Qwen2.5 at every step, about 14 ms a token on 2 cores."""
        import numpy as np  # noqa: PLC0415

        lib, llm = self.lib, self.llm
        vocab = llm._model.vocab
        n_vocab = llm.n_vocab()
        sampler = lib.llama_sampler_init_grammar(vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not sampler:
            raise ValueError("the output grammar could not be compiled")
        one = (lib.llama_token_data * 1)()
        one_p = ctypes.cast(one, lib.llama_token_data_p)
        full = np.zeros(n_vocab, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True))
        full_p = full.ctypes.data_as(lib.llama_token_data_p)
        out: list[int] = []
        try:
            for _ in range(max_tokens):
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
                token = int(np.argmax(logits))
                one[0].id, one[0].logit, one[0].p = token, float(logits[token]), 0.0
                arr = lib.llama_token_data_array(data=one_p, size=1, selected=-1, sorted=False)
                lib.llama_sampler_apply(sampler, ctypes.byref(arr))
                if not np.isfinite(one[0].logit):  # rejected: the best token the grammar allows
                    full["id"] = np.arange(n_vocab, dtype=np.intc)
                    full["logit"] = logits
                    arr = lib.llama_token_data_array(data=full_p, size=n_vocab, selected=-1, sorted=False)
                    lib.llama_sampler_apply(sampler, ctypes.byref(arr))
                    best = int(np.argmax(full["logit"][:arr.size]))
                    if not np.isfinite(full["logit"][best]):
                        raise ValueError("the output grammar allows no next token")
                    token = int(full["id"][best])
                if lib.llama_vocab_is_eog(vocab, token):
                    return out, True
                lib.llama_sampler_accept(sampler, token)
                out.append(token)
                self.evaluate((token,))
            return out, False
        finally:
            lib.llama_sampler_free(sampler)
