"""A package's public names imported on first use (PEP 562), so that importing the package stays cheap: `import
localragas` (the pytest plugin loads it in every pytest session), `localragas.report` (a run imports the writers of
the outputs asked for only)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str],
                 *own: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The package's module-level __getattr__ and __dir__: each name of `exports` (name -> its module, relative to
    the package) imported on first use and then kept in the package; `own`: public names the package defines itself
    that dir() lists too."""

    def __getattr__(name: str) -> object:
        if name in exports:
            value = getattr(import_module(f".{exports[name]}", package), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*(k for k in vars(sys.modules[package]) if not k.startswith("_")), *exports, *own})

    return __getattr__, __dir__
