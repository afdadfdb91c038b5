"""No import circle between the package's modules: a module that imports another which (through any chain) imports it
back is a circle, whether the imports sit at the top of a module or inside a function (a late import is still a
dependency: it runs when the function does, and the two modules can then be neither read nor changed apart). Read
from the source with `ast`, nothing imported.

Left out: the imports of an `if TYPE_CHECKING:` block, which are never executed (typing.TYPE_CHECKING is False at run
time; only a type checker reads them, for annotations). Importing a submodule also runs its package's __init__.py;
that implicit step is not an edge here, only the imports written.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "localragas"


def _module(path: Path) -> str:
    parts = ["localragas", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside an `if TYPE_CHECKING:` block's body (its else branch runs, and is kept)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None  # TYPE_CHECKING, typing.TYPE_CHECKING, an alias
        if isinstance(test, (ast.Name, ast.Attribute)) and ast.unparse(test).endswith("TYPE_CHECKING"):
            skipped.update(id(x) for stmt in node.body for x in ast.walk(stmt))
    return skipped


def _existing(name: str, modules: dict[str, Path]) -> str | None:
    """`name` if it is a module of the package, else the nearest enclosing one (an imported class or function)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules `module` imports, anywhere in its file but an `if TYPE_CHECKING:` block."""
    path = modules[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    names: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    found = {_existing(n, modules) for n in names if n == "localragas" or n.startswith("localragas.")}
    return {m for m in found if m is not None and m != module}


def graph() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports."""
    modules = _modules()
    return {m: imports(m, modules) for m in modules}


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    """The modules `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges.get(m, ()))
    return seen


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each group of two or more modules that reach each other (a strongly connected component),
    its members sorted; the groups sorted."""
    reach = {m: _reachable(m, edges) for m in edges}
    groups = {tuple(sorted({m} | {n for n in reach[m] if m in reach.get(n, ())})) for m in edges if m in reach[m]}
    return sorted(list(g) for g in groups if len(g) > 1)


def test_no_import_cycle_in_the_package():
    found = cycles(graph())
    assert not found, "import circles (each group's modules import each other, through function-level imports too):\n" \
        + "\n".join(" <-> ".join(group) for group in found)


def test_the_reader_sees_late_and_relative_imports_and_leaves_type_checking_out(tmp_path, monkeypatch):
    """The checker itself: a circle closed by a function-level relative import is found and named; one closed only
    inside `if TYPE_CHECKING:` is not a circle; an `else:` branch of it still counts."""
    pkg = tmp_path / "localragas"
    (pkg / "run").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "run" / "runner.py").write_text("from .engines import open_engine\n\n\ndef score():\n    pass\n")
    (pkg / "run" / "engines.py").write_text("def open_engine():\n    from .runner import score\n")
    (pkg / "run" / "settings.py").write_text("from typing import TYPE_CHECKING as _TYPE_CHECKING\n\n"
                                             "if _TYPE_CHECKING:\n"
                                             "    from .shard import Shard\n")
    (pkg / "run" / "shard.py").write_text("from localragas.run.settings import x\n")
    (pkg / "gate.py").write_text("import typing\n\nif typing.TYPE_CHECKING:\n    pass\nelse:\n"
                                 "    from . import report\n")
    (pkg / "report.py").write_text("from .gate import run_gate\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    edges = graph()
    assert edges["localragas.run.engines"] == {"localragas.run.runner"}
    assert edges["localragas.run.settings"] == set()
    assert cycles(edges) == [["localragas.gate", "localragas.report"],
                             ["localragas.run.engines", "localragas.run.runner"]]
