"""The Judge: one abstract method per backend (`_complete`), the rest concrete."""
from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pydantic import ValidationError

from ..core.errors import JudgeError
from ..core.outputs import Choices, Output, YesNo, json_schema, schema_text
from ..prompts import Prompt
from .cache import JudgeCache, cache_key

if TYPE_CHECKING:
    from ..calibration_map import CalibrationMap
    from ..prompts.overrides import PromptOverrides
    from .yes_no import NextTokens

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


@dataclass
class CallLog:
    """The calls asked for one sample (its scoring context's log, localragas.scoring): a record per call, for the
    sample's calls_by_prompt, and the sample's share of the counters."""

    records: list[dict] = field(default_factory=list)
    stats: JudgeStats = field(default_factory=JudgeStats)


class Judge(ABC):
    """A local model that answers a Prompt with an instance of a pydantic Output model.

    generate() may be called from several threads at once (`evaluate(concurrency=N)`): the run totals in `stats`
    are updated under a lock, and each call is also recorded in the CallLog it is given (the scoring context's of
    the sample it is asked for), else in the judge's own `log` (calls made directly). A backend whose `_complete` is
    not thread-safe sets `max_concurrency = 1`; the runner then scores one sample at a time.
    """

    name: str = "judge"
    fingerprint: str = ""
    n_ctx: int | None = None  # context window in tokens (prompt + reply); None: unlimited, prompts are never split
    max_concurrency: int | None = None  # calls this backend can serve at once; None = no limit of its own
    # the map of its graded verdicts' P(yes) (localragas.calibration_map; set by get_judge, judges/calibrated.py);
    # None: uncalibrated. Applied by asking.verdicts, never here: the cache keeps raw P(yes).
    calibration: "CalibrationMap | None" = None
    # the user's instruction texts for built-in prompt families (prompts/overrides.py; set by the run from
    # `[prompts]` / `--prompt`), applied to every prompt before it is asked or cached; None: the built-in texts
    prompts: "PromptOverrides | None" = None
    # why the judge check (run/judge_check.py) is not run on this judge, e.g. a fake judge a test builds in code; None:
    # checked, unless its catalogue entry is exempt (ModelSpec.judge_check)
    judge_check_exempt: str | None = None

    def __init__(self) -> None:
        self.stats = JudgeStats()  # run totals, all threads
        self.cache: JudgeCache | None = None
        self._lock = threading.Lock()
        self.log = CallLog()  # calls asked without a log of their own (directly, not for a scored sample)

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in a prompt: the judge's tokenizer when it has one; here an estimate, 1 per 3 characters.

        Used by localragas.asking to fit prompts into `n_ctx`, and only for prompts whose UTF-8 size exceeds it.
        """
        return -(-len(text) // 3)

    def _count(self, log: CallLog, **deltas: float) -> None:
        """Add to the run totals (under the lock) and to the log's counters."""
        mine = log.stats
        with self._lock:
            for k, v in deltas.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)
        for k, v in deltas.items():
            setattr(mine, k, getattr(mine, k) + v)

    @abstractmethod
    def _complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        """Run the model with decoding constrained to `schema`; raise JudgeError when no reply can be had."""

    def _next_tokens(self, prompt: Prompt) -> "NextTokens":
        """The judge's top next-token candidates after `prompt` (judges/yes_no.py), nothing generated. Backends that
        can read them override this."""
        raise JudgeError(f"the {self.name} judge cannot give token probabilities for graded verdicts or rubrics; "
                         "use --metric-option METRIC.verdicts=json")

    def _yes_no(self, prompt: Prompt) -> Completion:
        """A graded verdict: the prompt asks a yes/no question; the Completion's text is the YesNo JSON built from the
        judge's next-token probabilities (judges/yes_no.py)."""
        from .yes_no import completion, yes_no_reply  # noqa: PLC0415

        top = self._next_tokens(prompt)
        return completion(yes_no_reply(top.candidates, prompt.name), top.prompt_tokens, top.cached_tokens)

    def _choices(self, prompt: Prompt, options: tuple[str, ...]) -> Completion:
        """The Choices JSON of the judge's next-token probabilities over one-token `options` (judges/yes_no.py)."""
        from .yes_no import choice_reply, completion  # noqa: PLC0415

        top = self._next_tokens(prompt)
        return completion(choice_reply(top.candidates, options, prompt.name), top.prompt_tokens, top.cached_tokens)

    def generate(self, prompt: Prompt, output: type[T], log: CallLog | None = None) -> T:
        """Ask the judge, its decoding constrained to `output`'s JSON schema; return a validated `output`. Raises
        JudgeError (never returns a guess). The call is recorded in `log` (default: the judge's own)."""
        prompt = self.with_overrides(prompt)
        return self._ask(prompt, output, log, lambda: self._complete(prompt, json_schema(output), output))

    def p_yes(self, prompt: Prompt, log: CallLog | None = None) -> float:
        """A graded verdict: P(yes) / (P(yes) + P(no)) of the judge's next token after `prompt`, a yes/no question
        (`_yes_no`, judges/yes_no.py: no token is generated). Cached like any reply (as a YesNo); recorded in `log`."""
        prompt = self.with_overrides(prompt)
        return self._ask(prompt, YesNo, log, lambda: self._yes_no(prompt)).p_yes

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str],
                             log: CallLog | None = None) -> dict[str, float]:
        """The judge's probability of each one-token option (a rubric's levels) as the first token of its reply to
        `prompt`, normalised over the options: read like p_yes, nothing generated; JudgeError when none of them is
        among its top next tokens. The prompt must list the options (the cache keys on its text)."""
        options = tuple(str(o).strip().lower() for o in options)
        prompt = self.with_overrides(prompt)
        got = self._ask(prompt, Choices, log, lambda: self._choices(prompt, options))
        if set(got.probabilities) != set(options):
            raise JudgeError(f"{prompt.name}: the judge's probabilities are for {sorted(got.probabilities)}, not the "
                             f"options {list(options)}")
        return {o: got.probabilities[o] for o in options}

    def with_overrides(self, prompt: Prompt) -> Prompt:
        """The prompt as asked: with the user's instruction text for its family (`prompts`), if any. The judge cache
        keys on the text asked, so an override needs no other key."""
        return self.prompts.apply(prompt) if self.prompts else prompt

    def _ask(self, prompt: Prompt, output: type[T], log: CallLog | None, run: Callable[[], Completion]) -> T:
        """The cache, else run(): counted, recorded, validated as `output`, cached."""
        log = self.log if log is None else log
        key = cache_key(self.fingerprint, schema_text(output), prompt) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                result = output.model_validate_json(hit[0])
            except ValidationError:
                pass  # a stale entry (schema class renamed, same text): ask the model again
            else:
                self._count(log, cache_hits=1)
                log.records.append({"prompt": prompt.name, "cache_hit": True, "prompt_tokens": hit[1],
                                    "completion_tokens": hit[2], "cached_tokens": 0, "seconds": 0.0})
                return result
        started = time.perf_counter()
        self._count(log, calls=1)
        try:
            done = run()
        except JudgeError as e:
            self._fail(log, str(e))
            raise
        finally:
            seconds = time.perf_counter() - started
            self._count(log, seconds=seconds)
        self._count(log, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                    cached_tokens=done.cached_tokens)
        log.records.append({"prompt": prompt.name, "cache_hit": False, "prompt_tokens": done.prompt_tokens,
                            "completion_tokens": done.completion_tokens, "cached_tokens": done.cached_tokens,
                            "seconds": round(seconds, 3)})
        if done.truncated:
            self._fail(log, f"{prompt.name}: reply truncated at the token limit")
            raise JudgeError(f"reply truncated at the token limit ({done.completion_tokens} tokens)")
        try:
            result = output.model_validate_json(done.text)
        except ValidationError as e:
            self._count(log, parse_failures=1)
            first = e.errors()[0]
            msg = f"reply did not match the {output.__name__} schema at {first['loc']}: {first['msg']}"
            self._fail(log, f"{prompt.name}: {msg}")
            raise JudgeError(msg) from None
        if self.cache is not None:
            self.cache.put(key, self.name, prompt.name, done.text, done.prompt_tokens, done.completion_tokens, seconds)
        return result

    def _fail(self, log: CallLog, message: str) -> None:
        self._count(log, failed_calls=1)
        with self._lock:
            self.stats.errors.append(message)

    @property
    def scoring_fingerprint(self) -> str:
        """What decides the judge's scores: its fingerprint and its calibration's content hash (the resume checkpoint
        keys; the judge cache's key is the fingerprint alone, its replies raw), and the prompt overrides' hash."""
        return (self.fingerprint + (f"+calibration:{self.calibration.sha256[:16]}" if self.calibration else "")
                + (f"+prompts:{self.prompts.sha256[:16]}" if self.prompts else ""))

    def describe(self) -> dict:
        return {"name": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:
        """Release the model and the cache."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None
