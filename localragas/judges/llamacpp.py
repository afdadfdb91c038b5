"""In-process GGUF judge through llama-cpp-python, decoding constrained by a GBNF grammar built from the schema."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from . import catalogue
from ..core.errors import JudgeError, MissingDependencyError, ModelLoadError
from ..core.reply_schemas import Output, schema_text
from ..prompts import Prompt
from .base import Completion, Judge, NextTokens
from .llama_steps import LlamaSteps
from .prefix_steps import PrefixSteps
from .yes_no import top_from_logits


class LlamaCppSettings(BaseModel):
    """Options of the llamacpp backend (`--judge-option KEY=VALUE`)."""

    model_config = ConfigDict(extra="forbid")

    n_ctx: int = Field(8192, ge=512, description="context window in tokens")
    n_threads: int | None = Field(None, ge=1, description="CPU threads (default: all cores)")
    n_gpu_layers: int = Field(0, description="layers offloaded to a GPU (-1: all) with a GPU build")
    temperature: float = Field(0.0, ge=0.0, description="0 = greedy, deterministic")
    seed: int = 42
    state_cache_mb: int = Field(1024, ge=0, description="RAM for saved KV states (judges/prefix_steps.py), so calls "
                                "that share a prefix (system prompt + contexts) reuse it even when not consecutive; "
                                "0 = off")
    max_tokens: int = Field(4096, ge=16, description="cap on generated tokens per call (the bounded schemas close well within it)")


def _import_llama():
    try:
        import llama_cpp  # noqa: PLC0415 - heavy, optional
    except ImportError as e:
        raise MissingDependencyError(
            "the llamacpp judge needs llama-cpp-python: pip install 'localragas[llamacpp]' "
            f"(or run scripts/setup.sh) [{e}]"
        ) from None
    return llama_cpp


class LlamaCppJudge(Judge):
    # One llama.cpp context is not thread-safe, and interleaving two samples' calls would spoil the KV-prefix
    # reuse: the runner scores one sample at a time with this backend, and its calls are serialised besides.
    max_concurrency = 1

    def __init__(self, model_path: Path, sha256: str, label: str, settings: LlamaCppSettings | None = None):
        super().__init__()
        self._model_lock = threading.Lock()
        self.model_path = Path(model_path)
        self.sha256 = sha256  # of the file on disk (catalogue.file_sha256), never only a pinned value
        self._catalogue_name = label if label in catalogue.CATALOGUE else None
        # A truncated or corrupt file is refused now, naming the fix, before llama.cpp is even imported.
        catalogue.check_gguf(self.model_path, self._catalogue_name)
        self._llama_cpp = _import_llama()
        self.settings = settings or LlamaCppSettings()
        self._grammars: dict[str, object] = {}
        self._llm = None  # loaded on the first call: a fully cached run never loads the model
        self._steps: PrefixSteps | None = None  # graded verdicts' step evaluation, built with the model
        self.name = f"llamacpp/{label}"
        self.n_ctx = self.settings.n_ctx
        s = self.settings
        decoding = json.dumps(s.model_dump(exclude={"n_threads", "n_gpu_layers", "state_cache_mb"}), sort_keys=True)
        self.fingerprint = f"{sha256}:{hashlib.sha256(decoding.encode()).hexdigest()[:16]}"

    @property
    def llm(self):
        if self._llm is None:
            s = self.settings
            catalogue.check_gguf(self.model_path, self._catalogue_name)  # again: the file may have changed since
            catalogue.check_unchanged(self.model_path, self.sha256)  # same weights as the fingerprint's
            try:
                self._llm = self._llama_cpp.Llama(
                    model_path=str(self.model_path),
                    n_ctx=s.n_ctx,
                    n_threads=s.n_threads or os.cpu_count() or 1,
                    n_gpu_layers=s.n_gpu_layers,
                    seed=s.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as e:
                raise ModelLoadError(f"could not load the judge model {self.model_path}: {e}") from None
        return self._llm

    def count_tokens(self, text: str) -> int:
        """Exact, with the model's tokenizer (loads the model; only asked for prompts whose UTF-8 size exceeds the
        window, see localragas.judge_calls). special=True as in create_chat_completion, though content reaching here is
        already neutralised (localragas.prompts.base)."""
        return len(self.llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=True))

    def _grammar(self, output: type[Output]):
        key = schema_text(output)
        if key not in self._grammars:
            # Fails loudly on a schema it cannot express: never a silent fallback to "any JSON".
            self._grammars[key] = self._llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        with self._model_lock:
            return self._complete_locked(prompt, output)

    def _complete_locked(self, prompt: Prompt, output: type[Output]) -> Completion:
        s = self.settings
        steps = self._prefix_steps()
        segments = steps.steps.segments(prompt)
        # The saved KV state sharing the longest prefix with this prompt is restored first (llama-cpp-python then
        # evaluates only the rest); the state after the reply is saved for later calls. Only KV bytes are saved:
        # llama-cpp-python's own LlamaRAMCache copied up to n_batch rows of logits with every state, 1.8 s a call.
        if segments is not None:
            reused = steps.before_call(tuple(t for seg in segments for t in seg))
        else:
            steps.forget()
            reused = 0
        # Chat template hygiene (checked in llama-cpp-python 0.3.36; tests/fast/project/test_robustness.py asserts it):
        # Llama.__init__ wraps the GGUF's embedded `tokenizer.chat_template` in llama_chat_format.Jinja2ChatFormatter,
        # which compiles it in a jinja2.sandbox.ImmutableSandboxedEnvironment: a hostile template cannot reach Python
        # internals or mutate objects. A template equal to a known one (ChatML, Llama-3, Mistral) is replaced by the
        # built-in formatter. The rendered prompt is then tokenized with special=True, so chat-template tokens
        # written inside data would act as real control tokens: prompts.base.neutralise breaks them in all content.
        if segments is not None and s.temperature == 0:
            return self._greedy(prompt, output, [t for seg in segments for t in seg], reused)
        try:
            r = self.llm.create_chat_completion(
                messages=prompt.messages(),
                grammar=self._grammar(output),
                temperature=s.temperature,
                seed=s.seed,
                max_tokens=s.max_tokens,
            )
        except ValueError as e:  # e.g. "Requested tokens (9000) exceed context window of 8192"
            raise JudgeError(f"{prompt.name}: {e}") from None
        choice = r["choices"][0]
        usage = r.get("usage") or {}
        n_prompt = usage.get("prompt_tokens", 0)
        if segments is not None:
            steps.after_call()
        return Completion(
            text=choice["message"]["content"] or "",
            prompt_tokens=n_prompt,
            completion_tokens=usage.get("completion_tokens", 0),
            cached_tokens=min(reused, max(n_prompt - 1, 0)),  # llama.cpp re-evaluates the last prompt token
            truncated=choice.get("finish_reason") == "length",
        )

    def _greedy(self, prompt: Prompt, output: type[Output], tokens: list[int], reused: int) -> Completion:
        """Temperature 0 (the default): the prompt's tokens after what the context shares with them, then greedy
        decoding under the output's grammar (LlamaSteps.generate), the state saved for later calls."""
        steps = self._prefix_steps()
        adapter = steps.steps
        keep = min(reused, len(tokens) - 1)  # at least the last prompt token is evaluated, for its logits
        budget = min(self.settings.max_tokens, self.n_ctx - len(tokens))
        if budget < 1:
            raise JudgeError(f"{prompt.name}: Requested tokens ({len(tokens)}) exceed context window of {self.n_ctx}")
        try:
            adapter.truncate(keep)
            adapter.evaluate(tuple(tokens[keep:]))
            reply, finished = adapter.generate(self._grammar(output), budget)
        except ValueError as e:
            steps.forget()
            raise JudgeError(f"{prompt.name}: {e}") from None
        steps.after_call()
        text = self.llm.detokenize(reply, prev_tokens=tokens).decode("utf-8", "replace")
        return Completion(text=text, prompt_tokens=len(tokens), completion_tokens=len(reply), cached_tokens=keep,
                          truncated=not finished)

    def next_tokens(self, prompt: Prompt, words: tuple[str, ...]) -> NextTokens:
        with self._model_lock:
            return self._next_tokens_locked(prompt)

    def _next_tokens_locked(self, prompt: Prompt) -> NextTokens:
        """One forward pass, nothing generated: the logits after the prompt's last token are the distribution of the
        reply's first token. The prompt is evaluated in steps (judges/prefix_steps.py): the shared prefix of a
        sample's items (system prompt, contexts) is evaluated once as its own step and kept, or restored from a
        saved state, for the next item, so only each item's own tokens are evaluated, and P(yes) is identical run
        to run whatever ran before. A chat format the step adapter does not know is evaluated whole from an empty
        context (same determinism, no reuse)."""
        llm = self.llm
        steps = self._prefix_steps()
        segments = steps.steps.segments(prompt)
        try:
            if segments is None:
                steps.forget()
                n_prompt, reused = self._whole(prompt), 0
                logits = steps.steps.last_logits()
            else:
                logits, done = steps.run(segments)
                n_prompt, reused = done.prompt_tokens, done.reused_tokens
        except ValueError as e:  # "Requested tokens (9000) exceed context window of 8192"
            steps.forget()
            raise JudgeError(f"{prompt.name}: {e}") from None
        decode = lambda i: llm.detokenize([i]).decode("utf-8", "replace")  # noqa: E731
        return NextTokens(top_from_logits(logits, decode), n_prompt, reused)

    def _prefix_steps(self) -> PrefixSteps:
        if self._steps is None:
            self._steps = PrefixSteps(LlamaSteps(self.llm, self._llama_cpp), self.settings.state_cache_mb << 20)
        return self._steps

    def _whole(self, prompt: Prompt) -> int:
        """Evaluate a prompt whose chat format the step adapter does not know through llama-cpp-python's own chat
        handler, whole, from an empty context; one token is generated and never evaluated, so the context's logits
        are still those of the prompt's last token. Returns the prompt's token count."""
        llm = self.llm
        saved_cache, llm.cache = llm.cache, None  # no saved state is restored…
        llm.n_tokens = 0  # …and no prefix of the last call is kept
        try:
            r = llm.create_chat_completion(messages=prompt.messages(), temperature=0.0, seed=self.settings.seed,
                                           max_tokens=1)
        finally:
            llm.cache = saved_cache
        return (r.get("usage") or {}).get("prompt_tokens", 0)

    def describe(self) -> dict:
        return {**super().describe(), "model_path": str(self.model_path), "settings": self.settings.model_dump()}

    def close(self) -> None:
        super().close()
        if self._llm is not None:
            self._llm.close()
            self._llm = None
            self._steps = None
