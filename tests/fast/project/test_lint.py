"""ruff and mypy, as pyproject.toml configures them ([tool.ruff], [tool.mypy]), pass on the code: the README's test
command runs them. Each skips, naming the install command, only when its tool is not installed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed: pip install -e '.[test]' (or SETUP_EXTRAS=test bash scripts/setup.sh) "
                    "installs it")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's localragas, whatever is installed
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


def test_ruff_finds_nothing():
    got = _run("ruff", "check", "--no-fix", "--output-format", "concise", "localragas", "tests", "research")
    assert got.returncode == 0, f"ruff check (rules: [tool.ruff.lint] in pyproject.toml):\n{got.stdout}{got.stderr}"


def test_mypy_finds_nothing():
    got = _run("mypy")  # what and how: [tool.mypy] in pyproject.toml
    assert got.returncode == 0, f"mypy ([tool.mypy] in pyproject.toml):\n{got.stdout}{got.stderr}"
    assert "Success: no issues found" in got.stdout
