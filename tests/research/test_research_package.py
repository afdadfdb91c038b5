"""The research package is apart from the product: setuptools' package discovery (pyproject.toml) leaves it out of the
wheel, localragas never imports it, its modules import each other as a package (no sys.path edits) and each one run
with `python -m` has a --help."""
from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

import research

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(m.name for m in pkgutil.walk_packages(research.__path__, "research.") if not m.ispkg)
# run by path in ragas's own venv, never imported; the verifier's signal recorder needs llama-cpp at import
NOT_IMPORTED = {"research.benchmarks.ragas_child"}


def test_the_wheel_holds_localragas_and_not_research():
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(ROOT), **find)
    assert "localragas" in packages and "localragas.quality" in packages
    assert not [p for p in packages if p.split(".")[0] != "localragas"]


def test_the_product_never_imports_research():
    imports = re.compile(r"^\s*(from|import) research\b", re.MULTILINE)
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "localragas").rglob("*.py") if imports.search(p.read_text())]
    assert hits == []


def test_no_module_edits_sys_path():
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "research").rglob("*.py") if "sys.path" in p.read_text()]
    assert hits == []


@pytest.mark.parametrize("name", [m for m in MODULES if m not in NOT_IMPORTED])
def test_each_module_imports_as_part_of_the_package(name):
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} says what it is for"


@pytest.mark.parametrize("name", ["research.accuracy.paired_calibration", "research.benchmarks.memory"])
def test_a_module_runs_from_the_checkout_root_with_python_m(name):
    r = subprocess.run([sys.executable, "-m", name, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage:")
