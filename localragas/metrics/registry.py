"""The metric registry: every metric by name, and the lookups (all_metrics, get_metrics, default_metric_names). One
way in, register_metric: the decorator on each built-in metric's class (the metrics package imports every module of
localragas/metrics/ but the helpers: a new metric is one new module, no list to edit), and the same function for a
plugin's metric (the `localragas.metrics` entry points, localragas.core.plugins) and a user's (metrics/custom.py). What
a metric is (name, needs, direction, options, default, order) is declared on its class (metrics/base.py Metric)."""
from __future__ import annotations

import pkgutil
from importlib import import_module
from pathlib import Path
from typing import Any, TypeVar

from ..core.errors import ConfigError
from .base import Metric

_REGISTRY: dict[str, Metric] = {}
# the modules of localragas/metrics/ that declare no metric: the Metric shape, options and shared helpers, the user's
# metrics, report definitions and this registry
_HELPERS = frozenset({"base", "custom", "options", "registry", "report_definitions", "shared", "statement_support"})

M = TypeVar("M", bound="Metric | type[Metric]")


def register_metric(metric: M) -> M:
    """Add a metric (or a Metric subclass, registered as its instance) to the registry; returned as given, so that it
    decorates a class. A metric without a source is built in when its class is in localragas.metrics, else a user's
    (its source: its module). A user's metric replaces one of the same name declared before; a built-in one's name is
    refused."""
    m = metric() if isinstance(metric, type) else metric
    if m.source is None and not type(m).__module__.startswith(f"{__package__}."):
        m.source = f"python ({type(m).__module__})"  # a plugin's or a user's module, as @localragas.metric notes it
    if m.source is not None:
        check_custom_name(m)
    elif m.name in _REGISTRY:
        raise ConfigError(f"two built-in metrics are named {m.name!r}: {type(_REGISTRY[m.name]).__qualname__} and "
                          f"{type(m).__qualname__}")
    _REGISTRY[m.name] = m
    return metric


def built_in_modules() -> list[str]:
    """The modules that declare the built-in metrics: every module of localragas/metrics/ but the helpers."""
    return [f"{__package__}.{info.name}" for info in pkgutil.iter_modules([str(Path(__file__).parent)])
            if info.name not in _HELPERS]


def register_modules(modules: list[str]) -> None:
    """Import the modules: each registers the metrics it declares (@register_metric)."""
    for name in modules:
        import_module(name)


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
        register_metric(got)


def all_metrics() -> dict[str, Metric]:
    """Every metric, in their declared order (Metric.order: the four RAGAS core metrics first), then by name."""
    _load_plugins()
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (kv[1].order is None, kv[1].order or 0, kv[0])))


def default_metric_names() -> list[str]:
    """The metrics computed when none is named (Metric.default: the four RAGAS core metrics), in order."""
    return [n for n, m in all_metrics().items() if m.default]


def get_metrics(names: "list[str | Metric] | None" = None,
                options: dict[str, dict[str, Any]] | None = None) -> list[Metric]:
    """The named metrics (default: default_metric_names, the four RAGAS core metrics), each configured with its
    `options`.

    A name may also be a Metric instance (a configured copy, e.g. AnswerCorrectness().with_options(...)).
    """
    known = all_metrics()
    names = list(names or default_metric_names())
    for n in names:  # a custom metric given as an object is known by name from now on (reports, compare)
        if isinstance(n, Metric) and n.source is not None and known.get(n.name) is not n:
            register_metric(n)
    unknown = [n for n in names if not isinstance(n, Metric) and n not in known]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(known)}")
    chosen = {m.name: m for m in (n if isinstance(n, Metric) else known[n] for n in names)}
    stray = sorted(set(options or {}) - set(chosen))
    if stray:
        raise ConfigError(f"options for metric(s) not chosen: {', '.join(stray)}; chosen: {', '.join(chosen)}")
    return [m.with_options(**(options or {})[n]) if n in (options or {}) else m for n, m in chosen.items()]
