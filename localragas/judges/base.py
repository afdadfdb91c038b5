"""The Judge: one abstract method per backend (`_complete`), the rest concrete."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import ValidationError

from ..errors import JudgeError
from ..outputs import Output, json_schema, schema_text
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
    """A local model that answers a Prompt with an instance of a pydantic Output model."""

    name: str = "judge"
    fingerprint: str = ""

    def __init__(self) -> None:
        self.stats = JudgeStats()
        self.cache: JudgeCache | None = None
        self.call_log: list[dict] = []  # one record per generate(): the runner moves them into each sample's result

    @abstractmethod
    def _complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """Run the model with decoding constrained to `schema`; raise JudgeError when no reply can be had."""

    def generate(self, prompt: Prompt, output: type[T]) -> T:
        """Ask the judge; return a validated `output`. Raises JudgeError (never returns a guess)."""
        key = cache_key(self.fingerprint, schema_text(output), prompt) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                result = output.model_validate_json(hit[0])
            except ValidationError:
                pass  # a stale entry (schema class renamed, same text): ask the model again
            else:
                self.stats.cache_hits += 1
                self.call_log.append({"prompt": prompt.name, "cache_hit": True, "prompt_tokens": hit[1],
                                      "completion_tokens": hit[2], "cached_tokens": 0, "seconds": 0.0})
                return result
        started = time.perf_counter()
        self.stats.calls += 1
        try:
            done = self._complete(prompt, json_schema(output), output)
        except JudgeError as e:
            self._fail(str(e))
            raise
        finally:
            seconds = time.perf_counter() - started
            self.stats.seconds += seconds
        self.stats.prompt_tokens += done.prompt_tokens
        self.stats.completion_tokens += done.completion_tokens
        self.stats.cached_tokens += done.cached_tokens
        self.call_log.append({"prompt": prompt.name, "cache_hit": False, "prompt_tokens": done.prompt_tokens,
                              "completion_tokens": done.completion_tokens, "cached_tokens": done.cached_tokens,
                              "seconds": round(seconds, 3)})
        if done.truncated:
            self._fail(f"{prompt.name}: reply truncated at the token limit")
            raise JudgeError(f"reply truncated at the token limit ({done.completion_tokens} tokens)")
        try:
            result = output.model_validate_json(done.text)
        except ValidationError as e:
            self.stats.parse_failures += 1
            first = e.errors()[0]
            msg = f"reply did not match the {output.__name__} schema at {first['loc']}: {first['msg']}"
            self._fail(f"{prompt.name}: {msg}")
            raise JudgeError(msg) from None
        if self.cache is not None:
            self.cache.put(key, self.name, prompt.name, done.text, done.prompt_tokens, done.completion_tokens, seconds)
        return result

    def _fail(self, message: str) -> None:
        self.stats.failed_calls += 1
        self.stats.errors.append(message)

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:
        """Release the model and the cache."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None
