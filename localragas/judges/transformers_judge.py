"""Judge on Hugging Face transformers: a model folder (safetensors) or a GGUF file loaded through transformers
(`gguf_file=`), decoding constrained to the output's JSON schema by an xgrammar logits processor.

Never contacts a model hub: every load is `local_files_only=True` and remote code is never trusted. torch,
transformers and xgrammar are imported on the first call (or when the fingerprint needs the resolved dtype), so
building the judge, validating its options and a fully cached run stay cheap.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from . import catalogue
from ..core.errors import ConfigError, JudgeError, MissingDependencyError, ModelLoadError
from ..core.offline import ensure_offline
from ..core.reply_schemas import Output, schema_text
from ..prompts import Prompt
from .base import Completion, Judge, NextTokens
from .cache import cache_key
from .transformers_batches import Batches, Rows
from .transformers_device import resolve_device
from .transformers_fingerprint import MAX_WHITESPACE, fingerprint
from .targets import catalogue_judge, judge_names, looks_like_path, missing_model
from .yes_no import top_from_logits

if TYPE_CHECKING:
    from .judging import Judging

T = TypeVar("T", bound=Output)

INSTALL = "pip install 'localragas[transformers]' (install torch==2.13.0 first for the CPU build)"


class TransformersSettings(BaseModel):
    """Options of the transformers backend (`--judge-option KEY=VALUE`)."""

    model_config = ConfigDict(extra="forbid")

    device: Literal["auto", "cpu", "cuda", "mps"] = Field("auto", description="auto: CUDA, then MPS, then CPU")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="auto: bfloat16 on a GPU (float16 on a CUDA GPU without bf16), float32 on CPU")
    max_new_tokens: int = Field(1024, ge=16, description="cap on generated tokens per call")
    temperature: float = Field(0.0, ge=0.0, description="0 = greedy, deterministic")
    seed: int = 42
    batch_size: int = Field(8, ge=1, description="rows per model.generate: generate_many(), or calls from "
                            "several threads (eval --concurrency N)")
    n_threads: int | None = Field(None, ge=1, description="torch CPU threads, process-wide (default: torch's choice)")


def _require(gguf: bool) -> None:
    needed = ["torch", "transformers", "xgrammar"] + (["gguf", "accelerate"] if gguf else [])  # transformers 5
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(f"the transformers judge needs {', '.join(missing)}: {INSTALL}")


# --- the backend ---------------------------------------------------------------------------------------------------


class TransformersJudge(Judge):
    # Any number of threads may call generate() (`eval --concurrency N`): their pending calls are run together,
    # up to batch_size rows per model.generate, one batch at a time.
    max_concurrency = None

    def __init__(self, source: Path, sha256: str, label: str, settings: TransformersSettings | None = None):
        """`source`: a model folder (config.json, *.safetensors, tokenizer files) or a .gguf file."""
        super().__init__()
        self.source = Path(source)
        self.gguf = self.source.is_file()
        _require(self.gguf)
        self.settings = settings or TransformersSettings()
        self.sha256 = sha256
        self.name = f"transformers/{label}"
        self._fingerprint = ""
        self._device = ""
        self._dtype = ""
        self._model = None  # loaded on the first call: a fully cached run never loads the model
        self._tokenizer = None
        self._compiler = None
        self._grammars: dict[str, Any] = {}
        # the model's calls, batched; `_run` looked up on each batch (tests count its rows)
        self._batches = Batches(lambda rows: self._run(rows), self._key, self.settings.batch_size)

    # -- settings that need torch -------------------------------------------------------------------------------------

    def _resolve(self) -> None:
        if not self._device:
            self._device, self._dtype = resolve_device(self.settings.device, self.settings.dtype)

    @property
    def fingerprint(self) -> str:  # type: ignore[override]
        """Weights sha256 + what changes a reply: decoding settings, the resolved dtype, the JSON style."""
        if not self._fingerprint:
            self._resolve()
            s = self.settings
            self._fingerprint = fingerprint(self.sha256, self._dtype, s.max_new_tokens, s.temperature, s.seed)
        return self._fingerprint

    @fingerprint.setter
    def fingerprint(self, value: str) -> None:
        self._fingerprint = value

    # -- loading ------------------------------------------------------------------------------------------------------

    def _load(self) -> None:
        if self._model is not None:
            return
        if self.gguf:
            catalogue.check_unchanged(self.source, self.sha256)  # same weights as the fingerprint's
        ensure_offline()  # before transformers imports huggingface_hub, which reads the variables once
        self._resolve()
        import torch  # noqa: PLC0415
        import xgrammar as xgr  # noqa: PLC0415
        from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        hf_logging.disable_progress_bar()  # no "Loading weights" bars in our output
        if self.gguf:  # the GGUF reader's "de-quantizing GGUF tensors" bar is plain tqdm, which that call misses
            import transformers.modeling_gguf_pytorch_utils as gguf_utils  # noqa: PLC0415

            if getattr(gguf_utils, "tqdm", None) is not None and not isinstance(gguf_utils.tqdm, functools.partial):
                gguf_utils.tqdm = functools.partial(gguf_utils.tqdm, disable=True)

        if self.settings.n_threads:
            torch.set_num_threads(self.settings.n_threads)
        kwargs: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
        where = str(self.source)
        if self.gguf:
            where, kwargs["gguf_file"] = str(self.source.parent), self.source.name
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(where, dtype=getattr(torch, self._dtype), **kwargs)
            model.to(self._device).eval()
        except (OSError, ValueError, RuntimeError, KeyError, ImportError) as e:
            raise ModelLoadError(f"could not load the judge model {self.source} with transformers: {e}") from None
        if not tokenizer.chat_template:
            raise ModelLoadError(f"{self.source} has no chat template: use an instruct/chat model")
        stop = self._stop_ids(model, tokenizer)
        if not stop:
            raise ModelLoadError(f"{self.source}: neither the tokenizer nor the generation config names an EOS token")
        vocab = model.get_output_embeddings().weight.shape[0]
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab, stop_token_ids=stop)
        self._compiler = xgr.GrammarCompiler(info, max_threads=max(1, min(8, os.cpu_count() or 1)))
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.convert_ids_to_tokens(stop[0])
        tokenizer.padding_side = "left"  # batched generation: prompts end where generation starts
        self._stop = stop
        self._vocab = vocab
        self._tokenizer, self._model = tokenizer, model

    @staticmethod
    def _stop_ids(model, tokenizer) -> list[int]:
        ids: list[int] = []
        for v in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
            for i in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(i, int) and i not in ids:
                    ids.append(i)
        return ids

    def _grammar(self, output: type[Output]):
        key = schema_text(output)
        if key not in self._grammars:
            # Fails loudly on a schema it cannot express: never a silent fallback to "any JSON".
            self._grammars[key] = self._compiler.compile_grammar(json_grammar(key))
        return self._grammars[key]

    def _render(self, prompt: Prompt) -> str:
        """The chat template (transformers renders it in a sandboxed, immutable jinja environment)."""
        tok = self._tokenizer
        try:
            return tok.apply_chat_template(prompt.messages(), tokenize=False, add_generation_prompt=True)
        except Exception as e:  # noqa: BLE001 - jinja raises TemplateError, or a template's own raise_exception
            if "system" not in str(e).lower():
                raise JudgeError(f"{prompt.name}: the chat template failed: {e}") from None
        # templates without a system role (e.g. Gemma): the system text opens the user turn
        return tok.apply_chat_template([{"role": "user", "content": prompt.text()}], tokenize=False,
                                       add_generation_prompt=True)

    # -- generation ---------------------------------------------------------------------------------------------------

    def complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        return self._batches.complete(prompt, output)

    def _run(self, rows: Rows) -> list[Completion]:
        """One left-padded batch through model.generate, one grammar matcher per row (rows may differ in schema)."""
        self._load()
        import torch  # noqa: PLC0415
        import xgrammar as xgr  # noqa: PLC0415
        from transformers import GenerationConfig, LogitsProcessorList  # noqa: PLC0415

        s, tok, model = self.settings, self._tokenizer, self._model
        prompts = [p for p, _ in rows]
        texts = [self._render(p) for p in prompts]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        lengths = enc["attention_mask"].sum(dim=1).tolist()
        width = enc["input_ids"].shape[1]
        limit = getattr(model.config, "max_position_embeddings", None) or width + s.max_new_tokens
        if width >= limit:
            raise JudgeError(f"{prompts[lengths.index(max(lengths))].name}: prompt of {max(lengths)} tokens does not "
                             f"fit the model's context of {limit} tokens")
        room = min(s.max_new_tokens, limit - width)  # a reply cut by the context end is reported truncated
        matchers = [xgr.GrammarMatcher(self._grammar(o)) for _, o in rows]
        processor = _GrammarMasker(xgr, matchers, self._vocab)
        sampling = s.temperature > 0
        # Set explicitly: generate() fills what is left unset from the model's generation_config.json.
        config = GenerationConfig(
            max_new_tokens=room, do_sample=sampling, repetition_penalty=1.0, eos_token_id=self._stop,
            pad_token_id=tok.pad_token_id,
            **({"temperature": s.temperature, "top_k": 0, "top_p": 1.0} if sampling else {}),
        )
        torch.manual_seed(s.seed)
        enc = {k: v.to(self._device) for k, v in enc.items()}
        with torch.inference_mode():
            out = model.generate(**enc, generation_config=config, logits_processor=LogitsProcessorList([processor]))
        done = []
        for row, (n_prompt, matcher) in enumerate(zip(lengths, matchers)):
            ids = out[row, width:].tolist()
            end = next((i for i, t in enumerate(ids) if t in self._stop), len(ids))
            done.append(Completion(
                text=tok.decode(ids[:end], skip_special_tokens=True),
                prompt_tokens=int(n_prompt),
                completion_tokens=end,
                truncated=not (matcher.is_terminated() or matcher.is_completed()),
            ))
        return done

    def next_tokens(self, prompt: Prompt, words: tuple[str, ...]) -> NextTokens:
        """One forward pass over the rendered prompt; the last position's logits are the first reply token's
        distribution (one prompt at a time: the calls of a graded verdict are short)."""
        with self._batches.lock:
            self._load()
            import torch  # noqa: PLC0415

            tok, model = self._tokenizer, self._model
            enc = tok([self._render(prompt)], return_tensors="pt", add_special_tokens=False)
            n_prompt = int(enc["input_ids"].shape[1])
            limit = getattr(model.config, "max_position_embeddings", None)
            if limit and n_prompt >= limit:
                raise JudgeError(f"{prompt.name}: prompt of {n_prompt} tokens does not fit the model's context of "
                                 f"{limit} tokens")
            enc = {k: v.to(self._device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = model(**enc).logits[0, -1].float().cpu().numpy()
        return NextTokens(top_from_logits(logits, lambda i: tok.decode([i])), n_prompt)

    def _key(self, prompt: Prompt, output: type[Output]) -> str:
        return cache_key(self.fingerprint, schema_text(output), prompt)

    def generate_many(self, prompts: Sequence[Prompt], output: type[T],
                      judging: "Judging | None" = None) -> list[T | JudgeError]:
        """Answer many prompts with one output type, up to `batch_size` rows per model.generate.

        Each prompt goes through `judging.generate` (the run's cache, overrides, stats, validation, call log; None:
        this judge's own context, nothing set); the first uncached prompt of a batch runs the whole batch, so its call
        carries the batch's time. Returns, in order, a validated output or that prompt's JudgeError. Batched greedy
        decoding may differ from one-by-one decoding in float rounding.
        """
        from .judging import judging_of  # noqa: PLC0415

        judging = judging_of(self if judging is None else judging)
        todo: dict[str, Prompt] = {}
        prompts = [judging.with_overrides(p) for p in prompts]  # as generate() will ask them (the batch's keys)
        for p in prompts:
            key = self._key(p, output)
            if key not in todo and not (judging.cache is not None and judging.cache.get(key) is not None):
                todo[key] = p
        self._batches.plan(list(todo.items()))
        results: list[T | JudgeError] = []
        try:
            for p in prompts:
                try:
                    results.append(judging.generate(p, output))
                except JudgeError as e:
                    results.append(e)
        finally:
            self._batches.unplan()
        return results

    def describe(self) -> dict:
        s = self.settings.model_dump()
        if self._device:
            s |= {"device": self._device, "dtype": self._dtype}
        return {**super().describe(), "model_path": str(self.source), "settings": s}

    def close(self) -> None:
        super().close()
        self._model = self._tokenizer = self._compiler = None
        self._grammars.clear()


# xgrammar (0.2.8 and before) writes a length-bounded JSON string as [^"\\\r\n]{0,N}, which lets raw control
# characters such as a tab in (invalid JSON: mlc-ai/xgrammar#800); this class excludes U+0000-U+001F as JSON does.
_LOOSE_CHAR = r'[^\"\\\r\n]'
_JSON_CHAR = r'[^\0-\x1f\"\\]'


def json_grammar(schema: str) -> str:
    """The EBNF xgrammar builds for a JSON schema (bounded whitespace), with strict JSON strings."""
    import xgrammar as xgr  # noqa: PLC0415

    ebnf = str(xgr.Grammar.from_json_schema(schema, any_whitespace=True, max_whitespace_cnt=MAX_WHITESPACE,
                                            strict_mode=True))
    return ebnf.replace(_LOOSE_CHAR, _JSON_CHAR)


class _GrammarMasker:
    """A transformers logits processor: one xgrammar matcher per batch row, tokens outside the grammar -> -inf."""

    def __init__(self, xgr, matchers: list, vocab: int):
        self.xgr, self.matchers, self.vocab = xgr, matchers, vocab
        self.bitmask = xgr.allocate_token_bitmask(len(matchers), vocab)
        self.started = False

    def __call__(self, input_ids, scores):
        if self.started:
            for row, m in enumerate(self.matchers):
                if not m.is_terminated() and not m.accept_token(int(input_ids[row, -1])):
                    raise JudgeError(f"the grammar refused token {int(input_ids[row, -1])} (a bug)")
        self.started = True
        for row, m in enumerate(self.matchers):
            if m.is_terminated():
                self.bitmask[row].fill_(-1)  # finished row (padded by generate): allow all, never all -inf
            else:
                m.fill_next_token_bitmask(self.bitmask, row)
        device = scores.device
        target = scores if device.type in ("cpu", "cuda") else scores.cpu()
        self.xgr.apply_token_bitmask_inplace(target, self.bitmask.to(target.device), vocab_size=self.vocab)
        return target if target is scores else target.to(device)


def make_judge(target: str, settings: TransformersSettings) -> TransformersJudge:
    """TARGET: a catalogue judge name (its GGUF), a model folder or a .gguf file."""
    if found := catalogue_judge(target):
        return TransformersJudge(*found, target, settings)
    p = Path(target).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise ConfigError(f"{p} is not a transformers model folder (no config.json)")
        if not any(p.glob("*.safetensors")):
            raise ConfigError(f"{p} holds no *.safetensors weights (only safetensors folders are loaded)")
        _require(False)
        return TransformersJudge(p, catalogue.model_folder_sha256(p), p.name, settings)
    if p.is_file():
        catalogue.check_gguf(p)
        _require(True)
        return TransformersJudge(p, catalogue.file_sha256(p), p.name, settings)
    if looks_like_path(target):
        raise missing_model(target, "judge model file or folder")
    raise ConfigError(f"transformers judge '{target}' is neither a catalogue model ({', '.join(judge_names())}), "
                      "a model folder nor a .gguf file")
