"""Entry points other packages add localragas metrics and judge backends through (groups `localragas.metrics` and
`localragas.judges`, as simonw/llm's plugins do): found with importlib.metadata, loaded only when asked for; a plugin
that fails to load is a PluginError naming the entry point (fail closed: never a run without it)."""
from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from .errors import ConfigError

# NAME = "module:object", a Metric (e.g. a Criterion, a @metric function) or a Metric subclass, registered by
# metrics.registry.register_metric as the built-in metrics are
METRICS = "localragas.metrics"
JUDGES = "localragas.judges"  # BACKEND = "module:factory", factory(target, options) -> Judge, used as BACKEND:MODEL
EMBEDDERS = "localragas.embedders"  # BACKEND = "module:factory", factory(target, options) -> Embedder, as BACKEND:MODEL


class PluginError(ConfigError):
    """A plugin's entry point could not be loaded, or loaded something of the wrong kind."""


def found(group: str) -> dict[str, EntryPoint]:
    """The group's entry points by name."""
    return {ep.name: ep for ep in entry_points(group=group)}


def load(ep: EntryPoint, group: str, what: str) -> Any:
    """The entry point's object; PluginError naming it (name, value, distribution) when importing it fails."""
    try:
        return ep.load()
    except Exception as e:  # noqa: BLE001 - any failure of a plugin's import is reported as the plugin's
        raise PluginError(f"plugin {describe(ep, group)} failed to load ({what}): {type(e).__name__}: {e}") from e


def describe(ep: EntryPoint, group: str) -> str:
    dist = getattr(ep, "dist", None)
    by = f" from {dist.name}" if dist is not None and getattr(dist, "name", None) else ""
    return f"'{ep.name} = {ep.value}' (entry point group {group}{by})"
