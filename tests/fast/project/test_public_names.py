"""The public names stay where users import them from while the modules behind them move (the layout of issue 16):
every `localragas.NAME` of `__all__`, loaded lazily in a fresh interpreter, and the entry points pyproject names."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]


def test_every_exported_name_loads_from_the_module_its_table_names():
    code = ("import json, localragas\n"
            "print(json.dumps({n: getattr(localragas, n).__module__ for n in localragas.__all__}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    modules = json.loads(out.stdout)
    from localragas import _EXPORTS  # noqa: PLC0415

    assert set(modules) == set(_EXPORTS) >= {"evaluate", "Sample", "Report", "calibrate", "assert_gate", "metric",
                                             "load_samples", "as_samples", "get_judge", "get_embedder"}
    for name, module in modules.items():
        assert module == f"localragas.{_EXPORTS[name]}" or module.startswith(f"localragas.{_EXPORTS[name]}."), name


def test_the_entry_points_and_documented_front_modules_import():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    targets = [project["scripts"]["localragas"], project["entry-points"]["pytest11"]["localragas"]]
    assert targets == ["localragas.cli:main", "localragas.pytest_plugin"]
    import importlib  # noqa: PLC0415

    from localragas.testing import assert_gate  # noqa: PLC0415

    assert callable(importlib.import_module("localragas.cli").main)
    assert hasattr(importlib.import_module("localragas.pytest_plugin"), "pytest_addoption")
    assert callable(assert_gate)
