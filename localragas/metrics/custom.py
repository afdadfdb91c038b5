"""Metrics a user declares: a yes/no criterion (scored by the judge's P(yes), calibratable as the family
`criterion:NAME`), a rubric of levels (the probability-weighted mean level, normalised to [0, 1], as G-Eval does),
both from `[custom_metrics.NAME]` tables or as Python objects, and a function registered with @metric. Each behaves
as a built-in metric: gate, intervals, evidence, reports, compare, calibrate (docs/custom-metrics.md)."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..judge_calls.custom import criterion_verdict, rubric_levels
from ..judge_calls.window import YES_NO_REPLY, Smallest, fields_item
from ..core.errors import ConfigError
from ..data.metric_definition import NO_MODE
from ..prompts.custom import FIELDS, criterion_prompt, rubric_prompt
from ..data.schema import MetricResult
from .base import GradedOnly, Metric
from .registry import check_custom_name, register_metric

if TYPE_CHECKING:
    from ..prompts import Prompt
    from ..judge_calls.sample_context import Scoring

_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
KINDS = ("criterion", "rubric")


def _check_common(where: str, name: str, question: str, fields: Any, threshold: Any) -> tuple[str, ...]:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: the name must be lower-case letters, digits and _ (starting with a letter), "
                          f"got {name!r}")
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"{where}: key 'question': an empty question; write what the judge is to decide")
    if isinstance(fields, str) or not fields or not all(isinstance(f, str) for f in fields):
        raise ConfigError(f"{where}: key 'fields': a list of sample fields ({', '.join(FIELDS)}), got {fields!r}")
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise ConfigError(f"{where}: key 'fields': unknown field(s) {', '.join(unknown)}; valid: {', '.join(FIELDS)}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not 0.0 <= threshold <= 1.0):
        raise ConfigError(f"{where}: key 'threshold': a number in [0, 1], got {threshold!r}")
    return tuple(dict.fromkeys(fields))


def _shown(sample, fields: tuple[str, ...]) -> "dict[str, str | list[str]] | str":
    """The fields' values, or the unscored reason for the first empty one."""
    shown: dict[str, str | list[str]] = {}
    for f in fields:
        value = getattr(sample, f)
        if f == "contexts":
            value = [c for c in value if c.strip()]
        if not value or (isinstance(value, str) and not value.strip()):
            return f"no_{f}"
        shown[f] = value
    return shown


class Custom:
    """What a declared metric keeps beside the Metric attributes: where it was declared (`localragas metrics`)."""

    source: str = "python"


def _empty(fields: tuple[str, ...]) -> "dict[str, str | list[str]]":
    """The fields with no data: the smallest prompt a criterion or rubric asks (the judge's window check)."""
    return {f: [] if f == "contexts" else "" for f in fields}


class Criterion(Custom, GradedOnly):
    """A yes/no question to the judge about some of the sample's fields, scored by P(yes) (calibrated when the
    judge's map covers `criterion:NAME`). higher_is_better=False: a "yes" is the bad outcome (e.g. "Is the answer
    rude?"), gated from above. It has no options."""

    item_fields = ("judged", "criterion", "yes")

    def __init__(self, name: str, question: str, fields: "list[str] | tuple[str, ...]" = ("question", "answer"), *,
                 higher_is_better: bool = True, threshold: float | None = None, definition: str | None = None,
                 source: str = "python", where: str | None = None):
        where = where or f"criterion {name!r}"
        self.needs = _check_common(where, name, question, fields, threshold)
        if not isinstance(higher_is_better, bool):
            raise ConfigError(f"{where}: key 'higher_is_better': true or false, got {higher_is_better!r}")
        self.name, self.question, self.higher_is_better, self.source = name, question.strip(), higher_is_better, source
        self._threshold = None if threshold is None else float(threshold)
        self.template = f"{self.question}\nfields: {', '.join(self.needs)}"
        self.definition = definition or f"judge's P(yes) to: {self.question}"
        self.problem = f"the judge does not say yes to: {self.question}" if higher_is_better else \
            f"the judge says yes to: {self.question}"

    @property
    def graded_family(self) -> str:
        return f"criterion:{self.name}"

    @property
    def threshold(self) -> float | None:
        return self._threshold

    def threshold_settings(self) -> dict[str, Any]:
        """The user's one threshold, whether or not a calibration covers the criterion's family."""
        return {"thresholds": {} if self._threshold is None else {NO_MODE: self._threshold}, "mode": None,
                "graded_family": self.graded_family}

    @property
    def window_prompts(self) -> dict[str, Smallest]:
        def smallest() -> Prompt:
            return criterion_prompt(self.name, self.question, _empty(self.needs), lang="en")

        return {self.graded_family: (smallest, fields_item(len(self.needs)), YES_NO_REPLY)}

    def measure(self, ctx: "Scoring") -> MetricResult:
        shown = _shown(ctx.sample, self.needs)
        if isinstance(shown, str):
            return MetricResult.unscored_because(shown)
        got = criterion_verdict(ctx, self.name, self.question, shown)
        return MetricResult.of(got.values[0], verdicts="probability", calibrated=got.calibrated,
                               judged=[{"criterion": self.question, **got.item(0, "yes")}])


class Rubric(Custom, Metric):
    """A question with levels (0-9, increasing, a description each): the judge's probability of each level's digit
    as its reply, the score the probability-weighted mean level normalised to [0, 1] ((mean - lowest) / (highest -
    lowest), as G-Eval does). Levels are single digits because the judge's next token is read."""

    threshold: float | None = None

    def __init__(self, name: str, question: str, levels: Mapping[Any, str],
                 fields: "list[str] | tuple[str, ...]" = ("question", "answer"), *, higher_is_better: bool = True,
                 threshold: float | None = None, definition: str | None = None, source: str = "python",
                 where: str | None = None):
        where = where or f"rubric {name!r}"
        self.needs = _check_common(where, name, question, fields, threshold)
        self.levels = _check_levels(where, levels)
        self.name, self.question, self.higher_is_better, self.source = name, question.strip(), higher_is_better, source
        self.threshold = None if threshold is None else float(threshold)
        self.template = "\n".join([self.question, *(f"{k}: {v}" for k, v in self.levels.items()),
                                   f"fields: {', '.join(self.needs)}"])
        low, high = min(self.levels), max(self.levels)
        self.definition = definition or f"judge's probability-weighted level {low}-{high}, normalised: {self.question}"
        self.problem = f"low levels on: {self.question}" if higher_is_better else f"high levels on: {self.question}"

    @property
    def prompts(self) -> tuple[str, ...]:
        return (f"rubric:{self.name}",)

    @property
    def window_prompts(self) -> dict[str, Smallest]:
        def smallest() -> Prompt:
            return rubric_prompt(self.name, self.question, self.levels, _empty(self.needs), lang="en")

        return {self.prompts[0]: (smallest, fields_item(len(self.needs)), YES_NO_REPLY)}

    def measure(self, ctx: "Scoring") -> MetricResult:
        shown = _shown(ctx.sample, self.needs)
        if isinstance(shown, str):
            return MetricResult.unscored_because(shown)
        p = rubric_levels(ctx, self.name, self.question, self.levels, shown)
        mean = sum(k * v for k, v in p.items())
        low, high = min(self.levels), max(self.levels)
        value = min(1.0, max(0.0, (mean - low) / (high - low)))
        return MetricResult.of(value, expected_level=round(mean, 4),
                               levels=[{"level": k, "description": self.levels[k], "p": round(v, 4)}
                                       for k, v in p.items()])


def _check_levels(where: str, levels: Any) -> dict[int, str]:
    if not isinstance(levels, Mapping) or len(levels) < 2:
        raise ConfigError(f"{where}: key 'levels': at least two levels, as {{1 = \"...\", 2 = \"...\"}}, "
                          f"got {levels!r}")
    out: dict[int, str] = {}
    for key, text in levels.items():
        k = int(key) if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()) else None
        if k is None or isinstance(key, bool) or not 0 <= k <= 9:
            raise ConfigError(f"{where}: key 'levels': level {key!r} is not a digit 0-9 (the judge's reply is read "
                              "as one digit)")
        if out and k <= max(out):
            raise ConfigError(f"{where}: key 'levels': levels must be increasing, {k} comes after {max(out)}")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}: key 'levels': level {k} needs a description")
        out[k] = text
    return out


class FunctionMetric(Custom, Metric):
    """A metric written as a function of the scoring context (@metric)."""

    threshold: float | None = None

    def __init__(self, fn: Callable[["Scoring"], "float | MetricResult | None"], name: str,
                 needs: tuple[str, ...], *, threshold: float | None, higher_is_better: bool, uses_judge: bool,
                 uses_embedder: bool, definition: str | None, source: str):
        self.fn, self.name, self.needs, self.threshold, self.source = fn, name, tuple(needs), threshold, source
        self.higher_is_better, self.uses_judge, self.uses_embedder = higher_is_better, uses_judge, uses_embedder
        self.definition = definition or (fn.__doc__ or name).strip().splitlines()[0]
        self.problem = f"low {name}" if higher_is_better else f"high {name}"

    def measure(self, ctx: "Scoring") -> MetricResult:
        got = self.fn(ctx)
        if isinstance(got, MetricResult):
            return got
        if got is None:
            return MetricResult.unscored_because("not_scored")
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not 0.0 <= got <= 1.0:
            raise ValueError(f"metric {self.name}: the function returned {got!r}, not a number in [0, 1], a "
                             "MetricResult or None")  # an error of the sample's, counted against the gate
        return MetricResult.of(float(got))

    def __call__(self, ctx: "Scoring") -> "float | MetricResult | None":
        return self.fn(ctx)


def metric(name: str | None = None, *, needs: "tuple[str, ...] | list[str]" = ("question", "answer"),
           threshold: float | None = None, higher_is_better: bool = True, uses_judge: bool = False,
           uses_embedder: bool = False, definition: str | None = None) -> Callable[[Callable], FunctionMetric]:
    """Register a function of the scoring context (ctx.sample, ctx.p_yes(prompt), ctx.judging, ctx.embedder)
    returning a number in [0, 1], a MetricResult or None (unscored) as a metric, usable by name like a built-in.
    uses_judge: it asks the judge (its results then record the sample's language)."""
    def wrap(fn: Callable) -> FunctionMetric:
        shown = name or fn.__name__
        _check_common(f"@metric {shown!r}", shown, "-", list(needs), threshold)
        m = FunctionMetric(fn, shown, tuple(needs), threshold=threshold, higher_is_better=higher_is_better,
                           uses_judge=uses_judge, uses_embedder=uses_embedder, definition=definition,
                           source=f"python ({getattr(fn, '__module__', '?')})")
        register_metric(m)
        return m
    return wrap


_TABLE_KEYS = {"kind", "question", "fields", "higher_is_better", "threshold", "definition"}


def declared(tables: Mapping[str, Any], source: str, prefix: str = "custom_metrics") -> list[Metric]:
    """The metrics of a settings file's `[custom_metrics.NAME]` tables (custom_metrics_of), registered."""
    return [register_metric(m) for m in custom_metrics_of(tables, source, prefix)]


def custom_metrics_of(tables: Mapping[str, Any], source: str, prefix: str = "custom_metrics") -> list[Metric]:
    """The metrics of a settings file's `[custom_metrics.NAME]` tables, made and checked, not registered; ConfigError
    naming the table and the key of a bad one."""
    out = []
    for name, table in tables.items():
        where = f"{source}: [{prefix}.{name}]"
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: a table of kind, question, fields, ... expected, got {table!r}")
        kind = table.get("kind", "criterion")
        if kind not in KINDS:
            raise ConfigError(f"{where}: key 'kind': one of {', '.join(KINDS)}, got {kind!r}")
        allowed = _TABLE_KEYS | ({"levels"} if kind == "rubric" else set())
        stray = sorted(set(table) - allowed)
        if stray:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(stray)}; valid: {', '.join(sorted(allowed))}")
        args = {k: v for k, v in table.items() if k != "kind"}
        missing = [k for k in ("question", *(["levels"] if kind == "rubric" else [])) if k not in args]
        if missing:
            raise ConfigError(f"{where}: key '{missing[0]}' is missing")
        made = (Rubric if kind == "rubric" else Criterion)(name=name, source=source, where=where, **args)
        out.append(check_custom_name(made))
    return out
