"""The Metric shape and the metric registry."""
from __future__ import annotations

import copy
import functools
import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from .. import language
from ..asking import check_items, support_probabilities
from ..errors import ConfigError
from ..schema import MetricResult, Sample

if TYPE_CHECKING:
    from ..embeddings import Embedder
    from ..judges import Judge


class Metric(ABC):
    name: str
    needs: tuple[str, ...]  # sample fields the metric reads
    uses_embedder: bool = False
    uses_judge: bool = True
    higher_is_better: bool = True
    definition: str
    problem: str  # what a bad score means for the RAG system (gate messages)
    prompts: tuple[str, ...] = ()  # prompt families it asks the judge (checked against the judge's context window)
    options: dict[str, Any] = {}  # settings and their defaults; a configured copy: with_options(...)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each subclass's score() runs in its sample's language scope (localragas.language), and a scored result of
        a judged metric records that language in its evidence."""
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("score")
        if fn is None or getattr(fn, "_in_language_scope", False):
            return

        @functools.wraps(fn)
        def score(self: "Metric", sample: Sample, judge: "Judge", embedder: "Embedder | None" = None) -> MetricResult:
            with language.scope_for(sample) as scope:
                result = fn(self, sample, judge, embedder)
            if self.uses_judge and result.value is not None:
                result.evidence.setdefault("language", scope.lang)
            return result

        score._in_language_scope = True  # type: ignore[attr-defined]
        cls.score = score  # type: ignore[method-assign]

    @abstractmethod
    def score(self, sample: Sample, judge: "Judge", embedder: "Embedder | None" = None) -> MetricResult:
        """Score one sample; return MetricResult.unscored_because(reason) when it cannot be scored."""

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Validated option values (ConfigError on a bad one); subclasses with options override this."""
        return options

    def with_options(self, **options: Any) -> "Metric":
        """A copy of this metric with some options changed (e.g. answer_correctness weights)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(self.options) or "none"
            raise ConfigError(f"unknown option(s) {', '.join(unknown)} for metric {self.name}; valid: {valid}")
        configured = copy.copy(self)
        configured.options = self.check_options({**self.options, **options})
        return configured


# How a metric's yes/no verdicts are had (the `verdicts` option of faithfulness, context recall, context precision):
VERDICT_MODES = {
    "probability": "one item per call, scored P(yes) / (P(yes) + P(no)) from the judge's next-token probabilities "
                   "(graded; the default: closer to human labels, docs/accuracy.md)",
    "json": "all items in one call, a constrained-JSON yes/no each (the RAGAS way)",
}


DEFAULT_VERDICTS = "probability"


class WithVerdicts(Metric):
    """A metric with the `verdicts` option (faithfulness, context recall, context precision): the option checked,
    and the prompts its mode asks (for the judge's window check)."""

    options = {"verdicts": DEFAULT_VERDICTS}
    other_prompts: tuple[str, ...] = ()  # asked in either mode
    verdict_prompts: tuple[str, str]  # (graded, json)

    @property
    def prompts(self) -> tuple[str, ...]:  # type: ignore[override]
        graded, batched = self.verdict_prompts
        return (*self.other_prompts, graded if self.options["verdicts"] == "probability" else batched)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        mode = options["verdicts"]
        if mode not in VERDICT_MODES:
            valid = "; ".join(f"{k}: {v}" for k, v in VERDICT_MODES.items())
            raise ConfigError(f"{self.name}: verdicts must be one of {', '.join(VERDICT_MODES)}, got {mode!r} "
                              f"({valid})")
        return {**options, "verdicts": mode}


def support_result(judge: "Judge", items: list[str], contexts: list[str], mode: str, warnings: list[str],
                   key: tuple[str, str, str], **evidence: Any) -> MetricResult:
    """The share of `items` the contexts support (faithfulness's claims, context recall's statements), by the
    metric's `verdicts` mode: graded, the mean P(yes); json, supported / total. key = (evidence list name, item name,
    flag name), e.g. ("claims", "claim", "supported"); a graded item also carries its P(yes) as "p_<flag name>"."""
    plural, name, flag = key
    if mode == "json":
        flags = check_items(judge, items, contexts, warnings)
        rows = [{name: t, flag: f} for t, f in zip(items, flags)]
        value = sum(flags) / len(flags)
    else:
        probs = support_probabilities(judge, items, contexts, warnings)
        rows = [{name: t, flag: p >= 0.5, f"p_{flag}": round(p, 4)} for t, p in zip(items, probs)]
        value = sum(probs) / len(probs)
    return with_warnings(MetricResult.of(value, verdicts=mode, **{plural: rows}, **evidence), warnings)


def with_warnings(result: MetricResult, warnings: list[str]) -> MetricResult:
    """The result with the splits and truncations that shaped it listed in its evidence (`warnings`)."""
    if warnings:
        result.evidence["warnings"] = list(warnings)
    return result


class _SampleMemo(threading.local):
    judge: object = None
    key: str = ""
    data: dict[str, Any]


_memo = _SampleMemo()


def sample_memo(sample: Sample, judge: "Judge") -> dict[str, Any]:
    """A scratch dict shared by the metrics scoring one sample with one judge, in this thread: work that several
    metrics need (noise sensitivity's two modes, the claim checks of factual and answer correctness) is done once.
    Scoring another sample or with another judge starts an empty one."""
    key = sample.model_dump_json()
    if _memo.judge is not judge or _memo.key != key:
        _memo.judge, _memo.key, _memo.data = judge, key, {}
    return _memo.data


_REGISTRY: dict[str, Metric] = {}
DEFAULT = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")  # the RAGAS core metrics
ORDER = (
    *DEFAULT,
    "context_entity_recall",
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "factual_correctness",
    "factual_correctness_precision",
    "factual_correctness_recall",
    "answer_correctness",
    "semantic_similarity",
    "context_relevance",
    "id_based_context_precision",
    "id_based_context_recall",
)


def register(metric: Metric) -> Metric:
    _REGISTRY[metric.name] = metric
    return metric


def all_metrics() -> dict[str, Metric]:
    """Every metric, the four RAGAS core metrics first."""
    from . import (  # noqa: F401,PLC0415
        answer_relevancy,
        context_entity_recall,
        context_precision,
        context_recall,
        context_relevance,
        correctness,
        faithfulness,
        id_based,
        noise_sensitivity,
        semantic_similarity,
    )

    return {n: _REGISTRY[n] for n in sorted(_REGISTRY, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))}


def get_metrics(names: "list[str | Metric] | None" = None,
                options: dict[str, dict[str, Any]] | None = None) -> list[Metric]:
    """The named metrics (default: the four RAGAS core metrics), each configured with its `options`.

    A name may also be a Metric instance (a configured copy, e.g. AnswerCorrectness().with_options(...)).
    """
    known = all_metrics()
    names = list(names) if names else list(DEFAULT)
    unknown = [n for n in names if not isinstance(n, Metric) and n not in known]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(known)}")
    chosen = {m.name: m for m in (n if isinstance(n, Metric) else known[n] for n in names)}
    stray = sorted(set(options or {}) - set(chosen))
    if stray:
        raise ConfigError(f"options for metric(s) not chosen: {', '.join(stray)}; chosen: {', '.join(chosen)}")
    return [m.with_options(**(options or {})[n]) if n in (options or {}) else m for n, m in chosen.items()]
