"""The Judge: one abstract method per backend (`_complete`), the rest concrete."""
from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import ValidationError

from ..errors import JudgeError
from ..outputs import Output, YesNo, json_schema, schema_text
from ..prompts import Prompt
from .cache import JudgeCache, cache_key

T = TypeVar("T", bound=Output)


@dataclass
class Completion:
    """What a backend returns for one call."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV state was reused instead of evaluated
    truncated: bool = False  # stopped by max_tokens before the JSON closed


@dataclass
class JudgeStats:
    calls: int = 0  # calls that ran the model
    cache_hits: int = 0  # calls answered by the persistent cache, without the model
    failed_calls: int = 0
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["errors"] = self.errors[:20]
        return d

    def counters(self) -> dict[str, float]:
        """The numeric counters, for per-sample deltas."""
        return {k: v for k, v in self.__dict__.items() if isinstance(v, (int, float))}


class Judge(ABC):
    """A local model that answers a Prompt with an instance of a pydantic Output model.

    generate() may be called from several threads at once (`evaluate(concurrency=N)`): the run totals in `stats`
    are updated under a lock, and each thread keeps its own call log and counters for the sample it is scoring
    (`begin_sample()`, `call_log`, `sample_counters()`). A backend whose `_complete` is not thread-safe sets
    `max_concurrency = 1`; the runner then scores one sample at a time.
    """

    name: str = "judge"
    fingerprint: str = ""
    n_ctx: int | None = None  # context window in tokens (prompt + reply); None: unlimited, prompts are never split
    max_concurrency: int | None = None  # calls this backend can serve at once; None = no limit of its own

    def __init__(self) -> None:
        self.stats = JudgeStats()  # run totals, all threads
        self.cache: JudgeCache | None = None
        self._lock = threading.Lock()
        self._local = threading.local()

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in a prompt: the judge's tokenizer when it has one; here an estimate, 1 per 3 characters.

        Used by localragas.asking to fit prompts into `n_ctx`, and only for prompts whose UTF-8 size exceeds it.
        """
        return -(-len(text) // 3)

    # --- per-thread record of the sample being scored ----------------------------------------------------------

    @property
    def call_log(self) -> list[dict]:
        """This thread's calls since its last begin_sample(): one record per generate(), for the sample's result."""
        if not hasattr(self._local, "log"):
            self.begin_sample()
        return self._local.log

    def begin_sample(self) -> None:
        """Start this thread's call log and counters afresh (the runner calls it before each sample)."""
        self._local.log = []
        self._local.stats = JudgeStats()

    def sample_counters(self) -> dict[str, float]:
        """This thread's counters since its last begin_sample() (calls, cache hits, tokens, seconds…)."""
        if not hasattr(self._local, "stats"):
            self.begin_sample()
        return self._local.stats.counters()

    def _count(self, **deltas: float) -> None:
        """Add to the run totals (under the lock) and to this thread's sample counters."""
        if not hasattr(self._local, "stats"):
            self.begin_sample()
        mine = self._local.stats
        with self._lock:
            for k, v in deltas.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)
        for k, v in deltas.items():
            setattr(mine, k, getattr(mine, k) + v)

    @abstractmethod
    def _complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """Run the model with decoding constrained to `schema`; raise JudgeError when no reply can be had."""

    def _yes_no(self, prompt: Prompt) -> Completion:
        """A graded verdict: the prompt asks a yes/no question; the Completion's text is the YesNo JSON built from the
        judge's next-token probabilities (judges/yes_no.py). Backends that can read them override this."""
        raise JudgeError(f"the {self.name} judge cannot give token probabilities for graded verdicts; "
                         "use --metric-option METRIC.verdicts=json")

    def generate(self, prompt: Prompt, output: type[T]) -> T:
        """Ask the judge; return a validated `output`. Raises JudgeError (never returns a guess).

        With output=YesNo the judge is not constrained to a schema: its next-token probabilities for "yes" and "no"
        are read (`_yes_no`), cached like any reply."""
        key = cache_key(self.fingerprint, schema_text(output), prompt) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                result = output.model_validate_json(hit[0])
            except ValidationError:
                pass  # a stale entry (schema class renamed, same text): ask the model again
            else:
                self._count(cache_hits=1)
                self.call_log.append({"prompt": prompt.name, "cache_hit": True, "prompt_tokens": hit[1],
                                      "completion_tokens": hit[2], "cached_tokens": 0, "seconds": 0.0})
                return result
        started = time.perf_counter()
        self._count(calls=1)
        try:
            done = self._yes_no(prompt) if output is YesNo else self._complete(prompt, json_schema(output), output)
        except JudgeError as e:
            self._fail(str(e))
            raise
        finally:
            seconds = time.perf_counter() - started
            self._count(seconds=seconds)
        self._count(prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                    cached_tokens=done.cached_tokens)
        self.call_log.append({"prompt": prompt.name, "cache_hit": False, "prompt_tokens": done.prompt_tokens,
                              "completion_tokens": done.completion_tokens, "cached_tokens": done.cached_tokens,
                              "seconds": round(seconds, 3)})
        if done.truncated:
            self._fail(f"{prompt.name}: reply truncated at the token limit")
            raise JudgeError(f"reply truncated at the token limit ({done.completion_tokens} tokens)")
        try:
            result = output.model_validate_json(done.text)
        except ValidationError as e:
            self._count(parse_failures=1)
            first = e.errors()[0]
            msg = f"reply did not match the {output.__name__} schema at {first['loc']}: {first['msg']}"
            self._fail(f"{prompt.name}: {msg}")
            raise JudgeError(msg) from None
        if self.cache is not None:
            self.cache.put(key, self.name, prompt.name, done.text, done.prompt_tokens, done.completion_tokens, seconds)
        return result

    def _fail(self, message: str) -> None:
        self._count(failed_calls=1)
        with self._lock:
            self.stats.errors.append(message)

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:
        """Release the model and the cache."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None
