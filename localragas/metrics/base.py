"""The Metric shape (Metric, WithVerdicts) and what metrics share: the verdicts option, the uncalibrated list. A metric
declares itself on its class (name, needs, direction, options, default, order) and registers with @register_metric
(metrics/registry.py)."""
from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from ..judge_calls.verdicts import DEFAULT_VERDICTS, VERDICTS
from ..data.metric_definition import NO_MODE, MetricDefinition
from ..prompts.overrides import template_hashes
from ..data.schema import MetricResult
from .options import Options, choice

if TYPE_CHECKING:
    from ..judge_calls.verdicts import Verdicts
    from ..judge_calls.window import Smallest
    from ..prompts.overrides import PromptOverrides
    from ..judge_calls.sample_context import Scoring


_SET_PER_INSTANCE = ("prompts", "threshold", "items")  # properties a metric may also set in __init__


class Metric(ABC):
    name: str
    needs: tuple[str, ...]  # sample fields the metric reads
    uses_embedder: bool = False
    uses_judge: bool = True
    higher_is_better: bool = True
    default: bool = False  # computed when no metric is named (the four RAGAS core metrics)
    order: int | None = None  # its place in reports and listings, lowest first (None: after those with one, by name)
    definition: str
    problem: str  # what a bad score means for the RAG system (gate messages)
    options: Options = Options()  # its settings, one typed model per metric (metrics/options.py); with_options(...)
    source: str | None = None  # where a custom metric was declared (metrics/custom.py); None: built in
    template: str | None = None  # a custom metric's own prompt text (its question, levels): hashed in report.meta
    ragas_name: str | None = None  # the column name ragas gives the metric (None: its own name)
    summary: dict[str, Any] = {}  # how evidence.brief sums up its evidence (metric_definition.item_summary, ...)
    renderer: dict[str, Any] = {}  # how the HTML report shows its evidence (report/html/app.js RENDERERS)

    # Declared as properties so that a metric whose options decide them computes them; a metric that always has the
    # same one sets it as a class attribute (prompts = ("extract_claims", ...)), or in its __init__ (self.threshold =
    # 0.8: __setattr__ keeps it for that instance).
    @property
    def prompts(self) -> tuple[str, ...]:
        """The prompt families it asks the judge (checked against the judge's context window)."""
        return tuple(self.__dict__.get("_prompts", ()))

    @property
    def threshold(self) -> float | None:
        """The default gate threshold (None: gated only when one is given)."""
        return self.__dict__.get("_threshold")

    @property
    def items(self) -> str | None:
        """The evidence list of its judged items (claims, statements, chunks), if it has one."""
        return self.__dict__.get("_items")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SET_PER_INSTANCE and getattr(type(self), name) is getattr(Metric, name):  # not computed here
            self.__dict__[f"_{name}"] = tuple(value) if name == "prompts" else value
        else:
            super().__setattr__(name, value)

    def describe(self) -> MetricDefinition:
        """This metric, as configured, as data: what a report stores and its readers use (data/metric_definition.py)."""
        return MetricDefinition(
            name=self.name, definition=self.definition, problem=self.problem, needs=list(self.needs),
            higher_is_better=self.higher_is_better, default=self.default, uses_judge=self.uses_judge,
            uses_embedder=self.uses_embedder,
            ragas_name=self.ragas_name or self.name, items=self.items, summary=self.summary, renderer=self.renderer,
            **self.threshold_settings())

    def threshold_settings(self) -> dict[str, Any]:
        """The definition's default gate thresholds (MetricDefinition.thresholds, mode, graded_family)."""
        return {"thresholds": {} if self.threshold is None else {NO_MODE: self.threshold}}

    def default_threshold(self, calibrated: Collection[str] = ()) -> float | None:
        """The default gate threshold for a judge whose calibration covers the prompt families `calibrated`."""
        return self.describe().default_threshold(calibrated)

    @property
    def reads_question(self) -> bool:
        """It reads the sample's question (among its needs, or shown to the judge's claim extraction): a
        conversation's follow-up turn is rewritten into a standalone question for it (judge_calls/standalone.py)."""
        return "question" in self.needs or "extract_claims" in self.prompts

    @property
    def window_prompts(self) -> "dict[str, Smallest]":
        """Its own prompt families (a custom metric's) -> (the prompt with empty data, one item's data tokens, the
        reply's): what the judge's window check sizes (judge_calls.window.check_window; a built-in family's is its
        record's, prompts/families.py)."""
        return {}

    def score(self, ctx: "Scoring") -> MetricResult:
        """Score the context's sample: measure() it; the splits and truncations that shaped the result (this metric's
        warnings only) are listed in its evidence, and a scored result of a judged metric records the sample's
        language (its prompts'; and the language detected, when that has no prompts of its own)."""
        ctx.warnings = []
        result = self.measure(ctx)
        if ctx.warnings:
            result.evidence["warnings"] = list(ctx.warnings)
        if self.uses_judge and result.value is not None:
            result.evidence.setdefault("language", ctx.language.lang)
            if ctx.language.detected != ctx.language.lang:  # Japanese, Korean: asked in English
                result.evidence.setdefault("detected_language", ctx.language.detected)
        return result

    @abstractmethod
    def measure(self, ctx: "Scoring") -> MetricResult:
        """Score ctx.sample (asking the judge through localragas.judge_calls with ctx); return
        MetricResult.unscored_because(reason) when it cannot be scored."""

    def with_options(self, **options: Any) -> "Metric":
        """A copy of this metric with some options changed (e.g. answer_correctness weights), validated by its options
        model (Options.parse: a ConfigError names the metric, the option and the valid values)."""
        configured = copy.copy(self)
        configured.options = type(self.options).parse(self.name, {**dict(self.options), **options})
        return configured


class VerdictOptions(Options):
    """The options of a metric with yes/no verdicts: how they are had (judge_calls/verdicts.py)."""

    verdicts: str = choice({k: v.description for k, v in VERDICTS.items()}, DEFAULT_VERDICTS,
                           "how each item's verdict is had")


class WithVerdicts(Metric):
    """A metric with the `verdicts` option (faithfulness, context recall, context precision; judge_calls.verdicts): the
    option checked, the verdict strategy it chooses, the prompts its mode asks (for the judge's window check), the
    evidence of its items and the default gate threshold of each mode."""

    options: Options = VerdictOptions()
    verdict_prompts: tuple[str, str]  # (graded, json); the graded one is the family a calibration map is keyed by
    item_fields: tuple[str, str, str]  # (evidence list, item name, flag name), e.g. ("claims", "claim", "supported")
    # the default gate threshold per verdicts mode, and "calibrated" for graded verdicts the judge's map covers (raw
    # graded P(yes) runs lower: docs/calibration.md)
    thresholds: dict[str, float]

    @property
    def items(self) -> str:
        return self.item_fields[0]

    @property
    def other_prompts(self) -> tuple[str, ...]:
        """The prompt families it asks in either verdicts mode."""
        return ()

    @property
    def verdicts(self) -> "Verdicts":
        """The strategy its `verdicts` option chooses (a custom criterion, without options, has its own)."""
        assert isinstance(self.options, VerdictOptions)
        return VERDICTS[self.options.verdicts]

    @property
    def graded(self) -> bool:
        return self.verdicts.graded

    @property
    def graded_family(self) -> str:
        return self.verdict_prompts[0]

    @property
    def threshold(self) -> float | None:
        """The default threshold of the mode, uncalibrated (default_threshold: with a calibration)."""
        return self.thresholds.get(self.verdicts.name)

    def threshold_settings(self) -> dict[str, Any]:
        return {"thresholds": dict(self.thresholds), "mode": self.verdicts.name,
                "graded_family": self.graded_family if self.graded else None}

    @property
    def graded_prompts(self) -> tuple[str, ...]:
        """The prompt families whose text decides its graded P(yes): a calibration of graded_family holds only under
        them (calibration_map.CalibrationMap.for_prompts)."""
        return (self.verdict_prompts[0],)

    def prompt_hashes(self, overrides: "PromptOverrides | None") -> dict[str, str]:
        """The template sha256 of each of graded_prompts as the judge asks them (with the user's overrides), as a
        report's meta.prompts.sha256 has them: what a fitted calibration records and a run compares."""
        own = {p: self.template for p in self.graded_prompts} if self.template is not None else None
        return template_hashes(list(self.graded_prompts), overrides, own)

    @property
    def prompts(self) -> tuple[str, ...]:
        graded, batched = self.verdict_prompts
        return (*self.other_prompts, graded if self.verdicts.graded else batched)


class GradedOnly(WithVerdicts):
    """A WithVerdicts metric whose verdicts are always graded, without the `verdicts` option: each item one call to
    its one prompt family (`graded_family`, the name a calibration map would know it by), its P(yes) read (a user's
    criterion, the conversation metrics)."""

    options: Options = Options()
    family: str  # its prompt family
    # raw P(yes), with no calibration for the family: 0.50, the judge leaning "yes", fitted to nothing (as run/gate.py's
    # raw graded default)
    thresholds: dict[str, float] = {"probability": 0.50}

    @property
    def verdicts(self) -> "Verdicts":
        return VERDICTS["probability"]

    @property
    def graded_family(self) -> str:
        return self.family

    @property
    def graded_prompts(self) -> tuple[str, ...]:
        return (self.graded_family,)

    @property
    def prompts(self) -> tuple[str, ...]:
        return (self.graded_family,)


def uncalibrated(metrics: Iterable[Metric], calibrated: Collection[str] = ()) -> list[str]:
    """The metrics scored with graded verdicts whose prompt family the judge's calibration does not cover."""
    return [m.name for m in metrics
            if isinstance(m, WithVerdicts) and m.graded and m.graded_family not in calibrated]

