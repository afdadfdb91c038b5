"""The Judge: one abstract method per backend (`_complete`), the rest concrete."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import ValidationError

from ..errors import JudgeError
from ..outputs import Output, json_schema
from ..prompts import Prompt

T = TypeVar("T", bound=Output)


@dataclass
class Completion:
    """What a backend returns for one call."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: bool = False  # stopped by max_tokens before the JSON closed


@dataclass
class JudgeStats:
    calls: int = 0
    failed_calls: int = 0
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["errors"] = self.errors[:20]
        return d


class Judge(ABC):
    """A local model that answers a Prompt with an instance of a pydantic Output model."""

    name: str = "judge"
    fingerprint: str = ""

    def __init__(self) -> None:
        self.stats = JudgeStats()

    @abstractmethod
    def _complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """Run the model with decoding constrained to `schema`; raise JudgeError when no reply can be had."""

    def generate(self, prompt: Prompt, output: type[T]) -> T:
        """Ask the judge; return a validated `output`. Raises JudgeError (never returns a guess)."""
        started = time.perf_counter()
        self.stats.calls += 1
        try:
            done = self._complete(prompt, json_schema(output), output)
        except JudgeError as e:
            self._fail(str(e))
            raise
        finally:
            self.stats.seconds += time.perf_counter() - started
        self.stats.prompt_tokens += done.prompt_tokens
        self.stats.completion_tokens += done.completion_tokens
        if done.truncated:
            self._fail(f"{prompt.name}: reply truncated at the token limit")
            raise JudgeError(f"reply truncated at the token limit ({done.completion_tokens} tokens)")
        try:
            return output.model_validate_json(done.text)
        except ValidationError as e:
            self.stats.parse_failures += 1
            first = e.errors()[0]
            msg = f"reply did not match the {output.__name__} schema at {first['loc']}: {first['msg']}"
            self._fail(f"{prompt.name}: {msg}")
            raise JudgeError(msg) from None

    def _fail(self, message: str) -> None:
        self.stats.failed_calls += 1
        self.stats.errors.append(message)

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:
        """Release the model (optional)."""
