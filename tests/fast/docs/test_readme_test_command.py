"""The README's (and docs/install.md's) "Run the tests" block is one command that installs what the tests need (the
setup script with SETUP_EXTRAS=test: the test extra, the transformers backend, the test judge), lints (ruff, then
mypy with its cache: steps of their own, not tests) and then runs pytest, the tiers without a model in parallel and the real
tier alone (scripts/test.sh); the test extra holds what the test suite
imports beyond the base dependencies, and the two linters."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _block(page: str, heading: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8").split(heading, 1)[1]
    code = re.search(r"```bash\n(.*?)```", text, re.S)
    assert code, f"{page}: no bash block under {heading!r}"
    return [line.split("#", 1)[0].strip() for line in code.group(1).splitlines() if line.strip()]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_the_run_the_tests_blocks_are_one_command_that_installs_the_test_needs_lints_then_runs_pytest():
    blocks = {page: _block(page, "## Run the tests") for page in ("README.md", "docs/install.md")}
    assert blocks["README.md"] == blocks["docs/install.md"]
    [command] = blocks["README.md"]
    install, run = command.split(" && ")
    assert install == "SETUP_EXTRAS=test SETUP_SKIP_EVAL=1 bash scripts/setup.sh"
    assert run == "bash scripts/test.sh"
    # its steps, in order: ruff and mypy as pyproject.toml configures them ([tool.ruff], [tool.mypy]; mypy keeps its
    # cache in .mypy_cache), the tiers without a model on one process per core, then the real tier alone
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    steps = [line for line in script.splitlines() if line.startswith("step ")]
    assert '"$PY" -m ruff check' in steps[0] and '"$PY" -m mypy' in steps[1]
    assert '-m pytest -q -m "not real" -n' in script and script.rstrip().endswith('"$PY" -m pytest -q -m real')
    assert "set -euo pipefail" in script
    assert {"ruff", "mypy", "pytest-xdist"} <= _names(PYPROJECT["project"]["optional-dependencies"]["test"])
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert 'install -q -e ".[test]"' in setup  # what SETUP_EXTRAS=test installs: test_setup_extras.py runs it


def test_the_test_extra_holds_the_test_tools_the_suite_imports():
    test_extra = _names(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert {"pytest", "hypothesis"} <= test_extra
    imported = set()
    for path in (ROOT / "tests" / "fast").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # top-level imports only: a test file's own
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    dists = {"pytest": "pytest", "hypothesis": "hypothesis", "yaml": "pyyaml", "junitparser": "junitparser",
             "selenium": "selenium", "scipy": "scipy", "sklearn": "scikit-learn", "nbformat": "nbformat"}
    used = {dists[m] for m in imported if m in dists}
    assert "hypothesis" in used  # the import that failed after `pip install -e .`
    assert used <= test_extra, used - test_extra
