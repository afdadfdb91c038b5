"""Judge and embedder backends by name, built-in and plugins' registered the same way (as simonw/llm registers its
default plugins through the plugin manager third-party ones use): each is an entry point, `NAME = module:factory`.
The built-ins' are listed here in code (a source checkout needs no reinstall to find them), the plugins' are read from
the installed distributions (localragas.core.plugins: groups `localragas.judges`, `localragas.embedders`); both are
fed to one `register` and loaded by one `load`, only when asked for, so a backend's heavy imports happen in its
factory. A built-in name wins over a plugin's of the same name."""
from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any, Callable

from ..core.plugins import EMBEDDERS, JUDGES, found, load

Factory = Callable[[str, dict[str, Any]], Any]  # factory(model, options) -> a Judge / an Embedder


class Backends:
    """One kind of backend (judges, embedders): its entry point group, and the built-ins' entry points."""

    def __init__(self, group: str, what: str, built_in: dict[str, str]):
        self.group, self.what = group, what
        self.built_in: dict[str, EntryPoint] = {}
        for name, value in built_in.items():
            register(self.built_in, EntryPoint(name, value, group))

    def names(self) -> tuple[str, ...]:
        """The built-in backends' names, in their order."""
        return tuple(self.built_in)

    def factory(self, name: str) -> Factory | None:
        """The factory registered as `name`, loaded now; None when neither a built-in nor an installed plugin has it.
        The installed plugins are read only for a name no built-in has (and afresh each time: a package installed
        since is found)."""
        entries = dict(self.built_in)
        if name not in entries:
            for plugin in found(self.group).values():
                register(entries, plugin)
        ep = entries.get(name)
        return None if ep is None else load(ep, self.group, self.what)

    def built(self, name: str) -> Factory:
        """A built-in backend's factory, loaded now."""
        return load(self.built_in[name], self.group, self.what)


def register(entries: dict[str, EntryPoint], ep: EntryPoint) -> None:
    """Add a backend's entry point under its name; the first registered keeps it (the built-ins come first)."""
    entries.setdefault(ep.name, ep)


JUDGE_BACKENDS = Backends(JUDGES, "a judge backend", {
    name: f"localragas.judges.backends:{name}" for name in ("llamacpp", "openai", "transformers", "fake")})
EMBEDDER_BACKENDS = Backends(EMBEDDERS, "an embedder backend", {
    "sentence-transformers": "localragas.judges.embeddings:sentence_transformers",
    "fake": "localragas.judges.embeddings:fake"})
