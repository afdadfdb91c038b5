"""The metric registry: the built-in metrics, the default set and the order they are listed in, a user's metrics
(metrics/custom.py, plugins: localragas.core.plugins) registered by name, and the lookups every caller uses
(all_metrics, get_metrics). The one module of metrics/ that imports the metric modules; they import only
metrics/base.py (and each other's helpers), never this module back."""
from __future__ import annotations

from typing import Any

from ..core.errors import ConfigError
from .answer_relevancy import AnswerRelevancy
from .base import DEFAULT, Metric
from .context_entity_recall import ContextEntityRecall
from .context_precision import ContextPrecision
from .context_recall import ContextRecall
from .context_relevance import ContextRelevance
from .correctness import MODES, AnswerCorrectness, FactualCorrectness
from .faithfulness import Faithfulness
from .id_based import IDBasedContext
from .noise_sensitivity import NoiseSensitivity
from .semantic_similarity import SemanticSimilarity

BUILT_IN: tuple[Metric, ...] = (
    Faithfulness(), AnswerRelevancy(), ContextPrecision(), ContextRecall(), ContextEntityRecall(),
    NoiseSensitivity("relevant"), NoiseSensitivity("irrelevant"), *(FactualCorrectness(mode) for mode in MODES),
    AnswerCorrectness(), SemanticSimilarity(), ContextRelevance(), IDBasedContext("retrieved"),
    IDBasedContext("reference"),
)
_REGISTRY: dict[str, Metric] = {m.name: m for m in BUILT_IN}
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


def register_custom(metric: Metric) -> Metric:
    """Register a user's metric (metrics/custom.py, a plugin); one of the same name declared before is replaced, a
    built-in one's name is refused."""
    _REGISTRY[metric.name] = check_custom_name(metric)
    return metric


def check_custom_name(metric: Metric) -> Metric:
    """A user's metric whose name is not a built-in one's (else a ConfigError)."""
    known = all_metrics()
    if metric.name in known and known[metric.name].source is None:
        raise ConfigError(f"custom metric {metric.name!r} ({metric.source}) has the name of a built-in metric; "
                          "choose another name")
    return metric


_plugins = {"state": "new"}  # "loading" while the entry points load (their metrics register), then "done"


def _load_plugins() -> None:
    """The metrics of the `localragas.metrics` entry points (localragas.core.plugins), once; a plugin that fails is an
    error each time metrics are asked for, never a run without it."""
    if _plugins["state"] != "new":
        return
    _plugins["state"] = "loading"
    try:
        _register_plugins()
    except BaseException:
        _plugins["state"] = "new"
        raise
    _plugins["state"] = "done"


def _register_plugins() -> None:
    from ..core.plugins import METRICS, PluginError, describe, found, load  # noqa: PLC0415

    for ep in found(METRICS).values():
        got = load(ep, METRICS, "a metric")
        if isinstance(got, type) and issubclass(got, Metric):
            got = got()
        if not isinstance(got, Metric):
            raise PluginError(f"plugin {describe(ep, METRICS)} is a {type(got).__name__}, not a localragas Metric "
                              "(a Criterion, a Rubric, a @localragas.metric function or a Metric subclass)")
        got.source = f"plugin {ep.value}"
        register_custom(got)


def all_metrics() -> dict[str, Metric]:
    """Every metric, the four RAGAS core metrics first."""
    _load_plugins()
    return {n: _REGISTRY[n] for n in sorted(_REGISTRY, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))}


def get_metrics(names: "list[str | Metric] | None" = None,
                options: dict[str, dict[str, Any]] | None = None) -> list[Metric]:
    """The named metrics (default: the four RAGAS core metrics), each configured with its `options`.

    A name may also be a Metric instance (a configured copy, e.g. AnswerCorrectness().with_options(...)).
    """
    known = all_metrics()
    names = list(names) if names else list(DEFAULT)
    for n in names:  # a custom metric given as an object is known by name from now on (reports, compare)
        if isinstance(n, Metric) and n.source is not None and known.get(n.name) is not n:
            register_custom(n)
    unknown = [n for n in names if not isinstance(n, Metric) and n not in known]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(known)}")
    chosen = {m.name: m for m in (n if isinstance(n, Metric) else known[n] for n in names)}
    stray = sorted(set(options or {}) - set(chosen))
    if stray:
        raise ConfigError(f"options for metric(s) not chosen: {', '.join(stray)}; chosen: {', '.join(chosen)}")
    return [m.with_options(**(options or {})[n]) if n in (options or {}) else m for n, m in chosen.items()]
