"""The tests keep their shared code in the helper modules (tests/conftest.py says which): no test module imports
another, and the CLI runs in-process only through cli_helpers.cli (a subprocess's script is its own)."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import in the file, the ones inside functions too (not those in strings)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def test_no_test_module_imports_another_and_only_cli_helpers_runs_the_cli_in_process():
    wrong = [f"{p.relative_to(TESTS)}:{line} imports {module}"
             for p in sorted(TESTS.rglob("*.py")) if p.name != "cli_helpers.py"
             for line, module in _imports(p)
             if module.split(".")[0].startswith("test_") or module == "click.testing"]
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_both_kinds_of_import(tmp_path):
    bad = tmp_path / "test_bad.py"
    bad.write_text("from test_other import ROWS\n\ndef f():\n    from click.testing import CliRunner\n")
    assert _imports(bad) == [(1, "test_other"), (4, "click.testing")]
