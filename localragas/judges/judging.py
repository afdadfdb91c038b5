"""A run's judging context: one judge (a backend, judges/base.py, never changed by a run) and what one run asks it with,
its cache, the user's prompt overrides and the calibration, with the run's counters and the log of calls asked outside
a sample. A run (evaluate, calibrate, generate, the judge check) builds one and drops it when it ends, so two runs on
one judge neither share their settings nor add into each other's counters.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import ValidationError

from ..core.errors import JudgeError
from ..core.reply_schemas import Choices, Output, YesNo, json_schema, schema_text
from ..prompts import Prompt
from . import yes_no
from .base import Completion, Judge, NextTokens
from .cache import JudgeCache, cache_key
from .yes_no import YES_NO

if TYPE_CHECKING:
    from .calibration_map import CalibrationMap
    from ..prompts.overrides import PromptOverrides

T = TypeVar("T", bound=Output)
V = TypeVar("V", float, dict[str, float])  # a next-token read: P(yes), or a rubric's probabilities
H = TypeVar("H")  # a cached value, as read
R = TypeVar("R")  # a call's result


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
    """The calls asked for one sample (its scoring context's log, localragas.judge_calls.sample_context): a record per
    call, for the sample's calls_by_prompt, and the sample's share of the counters."""

    records: list[dict] = field(default_factory=list)
    stats: JudgeStats = field(default_factory=JudgeStats)


class Judging:
    """One run's judging: `judge` asked through `cache` (None: no cache), its data read here (a reply validated as its
    output model; P(yes) and a rubric's levels read from the next tokens, judges/yes_no.py), with `prompts` (the user's
    instruction texts for built-in families, prompts/overrides.py; None: the built-in texts) and `calibration` (the map
    of its graded verdicts' P(yes), localragas.judges.calibration_map, chosen by judges/calibrated.py; None:
    uncalibrated; applied by judge_calls.verdicts, never here: the cache keeps raw P(yes)).

    generate() may be called from several threads at once (`evaluate(concurrency=N)`): the run totals in `stats` are
    updated under a lock, and each call is also recorded in the CallLog it is given (the scoring context's of the
    sample it is asked for), else in `log` (calls asked directly, not for a scored sample).
    """

    def __init__(self, judge: Judge, *, cache: JudgeCache | None = None, prompts: "PromptOverrides | None" = None,
                 calibration: "CalibrationMap | None" = None):
        self.judge = judge
        self.cache = cache
        self.prompts = prompts
        self.calibration = calibration
        # the judge's name and backend options when it was built from them (run/judging_context.py run_judging): what a Dask
        # worker builds its own judge from; None: a Judge instance was given
        self.made_from: tuple[str | None, dict] | None = None
        self.stats = JudgeStats()  # this run's totals, all threads
        self.log = CallLog()
        self._lock = threading.Lock()

    # --- the backend's, as the judge-call layer reads them ------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def fingerprint(self) -> str:
        return self.judge.fingerprint

    @property
    def n_ctx(self) -> int | None:
        return self.judge.n_ctx

    def count_tokens(self, text: str) -> int:
        return self.judge.count_tokens(text)

    def describe(self) -> dict:
        return self.judge.describe()

    @property
    def scoring_fingerprint(self) -> str:
        """What decides the run's scores: the judge's fingerprint, its calibration's content hash (the resume
        checkpoint keys; the judge cache's key is the fingerprint alone, its replies raw), and the prompt overrides'
        hash."""
        return (self.fingerprint + (f"+calibration:{self.calibration.sha256[:16]}" if self.calibration else "")
                + (f"+prompts:{self.prompts.sha256[:16]}" if self.prompts else ""))

    @contextmanager
    def cached(self, cache: bool = True, folder: str | Path | None = None) -> Iterator["Judging"]:
        """This run's persistent cache for the block: opened (in `folder`, else .localragas/cache or
        $LOCALRAGAS_STATE_DIR/cache) and closed after; cache=False: none."""
        self.cache = JudgeCache(folder) if cache else None
        try:
            yield self
        finally:
            if self.cache is not None:
                self.cache.close()
            self.cache = None

    # --- asking -----------------------------------------------------------------------------------------------------

    def with_overrides(self, prompt: Prompt) -> Prompt:
        """The prompt as asked: with the user's instruction text for its family (`prompts`), if any. The judge cache
        keys on the text asked, so an override needs no other key."""
        return self.prompts.apply(prompt) if self.prompts else prompt

    def generate(self, prompt: Prompt, output: type[T], log: CallLog | None = None) -> T:
        """Ask the judge, its decoding constrained to `output`'s JSON schema; return a validated `output`. Raises
        JudgeError (never returns a guess). Cached as the reply's text; the call is recorded in `log` (default: this
        run's own)."""
        prompt = self.with_overrides(prompt)
        log = self.log if log is None else log
        key = self._key_of(prompt, output)
        if (hit := self._hit(key, prompt, log, lambda text: _valid(output, text))) is not None:
            return hit
        done, seconds = self._call(prompt, log, lambda: self.judge.complete(prompt, json_schema(output), output),
                                   counts=lambda done: done)
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
        self._put(key, prompt, done.text, done, seconds)
        return result

    def p_yes(self, prompt: Prompt, log: CallLog | None = None) -> float:
        """A graded verdict: P(yes) / (P(yes) + P(no)) of the judge's next token after `prompt`, a yes/no question,
        read from the backend's top next tokens (Judge.next_tokens, judges/yes_no.py: no token is generated), rounded
        to 6 digits. The number is cached (keyed as a YesNo reply); the call recorded in `log`."""
        prompt = self.with_overrides(prompt)
        return self._read(prompt, YesNo, YES_NO, log, lambda top: yes_no.p_yes(top.candidates, prompt.name),
                          yes_no.p_yes_of_stored)

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str],
                             log: CallLog | None = None) -> dict[str, float]:
        """The judge's probability of each one-token option (a rubric's levels) as the first token of its reply to
        `prompt`, normalised over the options: read like p_yes, nothing generated; JudgeError when none of them is
        among its top next tokens. The prompt must list the options (the cache keys on its text)."""
        options = tuple(str(o).strip().lower() for o in options)
        prompt = self.with_overrides(prompt)
        return self._read(prompt, Choices, options, log,
                          lambda top: yes_no.choice_probabilities(top.candidates, options, prompt.name),
                          lambda text: yes_no.choices_of_stored(text, options))

    def key(self, prompt: Prompt, output: type[Output]) -> str:
        """The cache key of a prompt already as asked (its overrides applied); a next-token read is keyed as its
        reply model (YesNo, Choices), as before it was read here."""
        return cache_key(self.fingerprint, schema_text(output), prompt)

    def _read(self, prompt: Prompt, keyed_as: type[Output], words: tuple[str, ...], log: CallLog | None,
              reading: Callable[[NextTokens], V], from_cache: Callable[[str], V | None]) -> V:
        """The cache, else the backend's next tokens read by `reading` (a JudgeError there is the call's): counted,
        recorded, the value cached."""
        log = self.log if log is None else log
        key = self._key_of(prompt, keyed_as)
        if (hit := self._hit(key, prompt, log, from_cache)) is not None:
            return hit

        def ask() -> tuple[NextTokens, V]:
            top = self.judge.next_tokens(prompt, words)
            return top, reading(top)

        (top, value), seconds = self._call(prompt, log, ask, counts=lambda done: done[0])
        self._put(key, prompt, yes_no.stored(value), top, seconds)
        return value

    def _key_of(self, prompt: Prompt, output: type[Output]) -> str:
        return self.key(prompt, output) if self.cache is not None else ""

    def _hit(self, key: str, prompt: Prompt, log: CallLog, value: Callable[[str], H | None]) -> H | None:
        """The cached value (counted and recorded as a hit), None when not cached or stale (the judge is asked
        again)."""
        if self.cache is None or (hit := self.cache.get(key)) is None or (got := value(hit[0])) is None:
            return None
        self._count(log, cache_hits=1)
        log.records.append({"prompt": prompt.name, "cache_hit": True, "prompt_tokens": hit[1],
                            "completion_tokens": hit[2], "cached_tokens": 0, "seconds": 0.0})
        return got

    def _call(self, prompt: Prompt, log: CallLog, run: Callable[[], R],
              counts: Callable[[R], Completion | NextTokens]) -> tuple[R, float]:
        """run() timed, counted and recorded: (its result, seconds). A JudgeError is a failed call, raised."""
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
        n = counts(done)
        self._count(log, prompt_tokens=n.prompt_tokens, completion_tokens=n.completion_tokens,
                    cached_tokens=n.cached_tokens)
        log.records.append({"prompt": prompt.name, "cache_hit": False, "prompt_tokens": n.prompt_tokens,
                            "completion_tokens": n.completion_tokens, "cached_tokens": n.cached_tokens,
                            "seconds": round(seconds, 3)})
        return done, seconds

    def _put(self, key: str, prompt: Prompt, text: str, n: Completion | NextTokens, seconds: float) -> None:
        if self.cache is not None:
            self.cache.put(key, self.name, prompt.name, text, n.prompt_tokens, n.completion_tokens, seconds)

    def add(self, counters: dict[str, float], errors: Sequence[str] = ()) -> None:
        """Calls asked elsewhere (a Dask worker's, for this run) into this run's totals: their counters and errors."""
        with self._lock:
            for k, v in counters.items():
                if isinstance(getattr(self.stats, k, None), (int, float)):
                    setattr(self.stats, k, getattr(self.stats, k) + v)
            self.stats.errors.extend(errors)

    def _count(self, log: CallLog, **deltas: float) -> None:
        """Add to the run totals (under the lock) and to the log's counters."""
        mine = log.stats
        with self._lock:
            for k, v in deltas.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)
        for k, v in deltas.items():
            setattr(mine, k, getattr(mine, k) + v)

    def _fail(self, log: CallLog, message: str) -> None:
        self._count(log, failed_calls=1)
        with self._lock:
            self.stats.errors.append(message)


def _valid(output: type[T], text: str) -> T | None:
    """A cached reply validated as `output`; None for a stale entry (schema class renamed, same text)."""
    try:
        return output.model_validate_json(text)
    except ValidationError:
        return None


def judging_of(judge: "Judge | Judging") -> Judging:
    """A judging context as given, or a judge's own with nothing set (no cache, built-in prompts, uncalibrated): what
    a caller outside a run (a test, a notebook sizing a window) asks through."""
    return judge if isinstance(judge, Judging) else Judging(judge)
