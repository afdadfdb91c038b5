"""The layers of localragas, as data: a module imports only from its own layer and the ones below it. Every import
counts, at the top of a module or inside a function (a late import is still a dependency), read from the source.
docs/architecture.md draws the same layers."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "localragas"

# Bottom first. An entry names a module ("run.gate") or a package with every module in it ("judges"); a module is in
# the first layer with an entry for it, so the schema layer's modules of data/ sit below the rest of data/.
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["core"]),
    ("schema", ["data.schema", "data.language", "data.metric_definition", "data.spot_check_models",
                "data.conversation_models", "data.report_views", "data.conversation_summary", "data.unscored"]),
    ("data", ["data"]),
    ("prompts", ["prompts"]),
    ("judges", ["judges"]),
    ("judge_calls", ["judge_calls"]),
    ("metrics", ["metrics"]),
    ("run", ["run"]),
    ("testset", ["testset"]),
    ("quality", ["quality"]),
    ("report", ["report"]),
    ("integrations", ["integrations"]),
    ("front", ["cli", "pytest_plugin", "testing", "__main__", ""]),  # "": localragas/__init__.py, the exports
]

# `from localragas import __version__` is the version string, not the package's lazy exports: allowed anywhere.
ANYWHERE = {"__version__"}

# Imports that break a rule today, with why (source module, imported module). Each is a late import in a method.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # evaluate(labels=...) adds people's spot checks to its report: their statistics read the quality layer's
    # agreement figures, and the gate (run layer) reads their block as data
    ("run.runner", "quality.spot_checks"): "evaluate() adds the spot checks of the labels it is given",
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    where = PACKAGE.joinpath(*name.split(".")) if name else PACKAGE
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, imported localragas module, the statement as written) for every import of the file."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "localragas" or alias.name.startswith("localragas."):
                    out.append((node.lineno, alias.name.removeprefix("localragas").lstrip("."), ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = parts[:len(parts) - node.level + 1] + ([node.module] if node.module else [])
            elif node.module == "localragas" or (node.module or "").startswith("localragas."):
                base = node.module.split(".")[1:]
            else:
                continue
            target = ".".join(base)
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                if _is_module(sub):
                    out.append((node.lineno, sub, ast.unparse(node)))
                elif not (target == "" and alias.name in ANYWHERE):
                    out.append((node.lineno, target, ast.unparse(node)))
    return out


def _layer(module: str) -> int | None:
    for i, (_, entries) in enumerate(LAYERS):
        for e in entries:
            if module == e or (e and module.startswith(e + ".")):
                return i
    return None


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    unplaced = [_module(p) or "localragas" for p in _files() if _layer(_module(p)) is None]
    assert not unplaced, f"not in LAYERS of tests/fast/project/test_import_rules.py (add each to its layer): {unplaced}"


def test_no_module_imports_a_higher_layer():
    broken, used = [], set()
    for path in _files():
        source = _module(path)
        for line, target, statement in _imports(path):
            if target == source or _layer(target) is None or _layer(target) <= _layer(source):
                continue
            if (source, target) in EXCEPTIONS:
                used.add((source, target))
                continue
            broken.append(f"{path.relative_to(PACKAGE.parent)}:{line} `{statement}`: {source or 'localragas'} "
                          f"(layer {LAYERS[_layer(source)][0]}) imports {target} (layer {LAYERS[_layer(target)][0]})")
    assert not broken, "a lower layer imports a higher one:\n" + "\n".join(broken)
    assert used == set(EXCEPTIONS), f"exceptions no longer needed (remove them): {set(EXCEPTIONS) - used}"


def test_the_reader_of_imports_sees_late_and_relative_imports(tmp_path, monkeypatch):
    """The checker itself: a function-level import, `from . import x`, `from ..x import y` and an absolute import."""
    pkg = tmp_path / "localragas"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "a.py", "b.py", "sub/__init__.py"):
        (pkg / name).write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import __version__, a\nimport localragas.b\n\n\ndef f():\n"
                                      "    from ..b import thing\n    from . import d\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert _imports(pkg / "sub" / "c.py") == [
        (1, "a", "from .. import __version__, a"), (2, "b", "import localragas.b"),
        (6, "b", "from ..b import thing"), (7, "sub", "from . import d")]


def _graph() -> dict[str, set[str]]:
    """Each module of the package -> the localragas modules it imports (every import, as _imports reads them)."""
    return {_module(p): {target for _, target, _ in _imports(p) if target != _module(p)} for p in _files()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of the graph: each group of two or more modules that reach each other (a strongly
    connected component), its members sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return out


def test_no_module_of_metrics_is_in_an_import_circle():
    """The registry (metrics/registry.py) imports the metric modules; none of them imports it, or anything that
    imports it, back."""
    circles = [c for c in _circles(_graph()) if any(m == "metrics" or m.startswith("metrics.") for m in c)]
    assert not circles, f"import circles through localragas/metrics/: {circles}"


def test_the_circle_finder_sees_a_registry_imported_back(tmp_path, monkeypatch):
    """The checker itself, on the shape metrics/ had: base imports each metric module, which imports base back."""
    pkg = tmp_path / "localragas"
    (pkg / "metrics").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "metrics" / "__init__.py").write_text("from .base import all_metrics\n")
    (pkg / "metrics" / "base.py").write_text("def all_metrics():\n    from . import faithfulness, recall\n")
    for name in ("faithfulness", "recall"):
        (pkg / "metrics" / f"{name}.py").write_text("from .base import all_metrics\n")
    (pkg / "metrics" / "other.py").write_text("from .base import all_metrics\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert _circles(_graph()) == [["metrics.base", "metrics.faithfulness", "metrics.recall"]]
