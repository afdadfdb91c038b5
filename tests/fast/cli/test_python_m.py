"""`python -m localragas` is the `localragas` command (research.benchmarks.history runs it so)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_python_m_localragas_runs_the_command_group():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run([sys.executable, "-m", "localragas", "metrics"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    assert "faithfulness" in got.stdout and "context_recall" in got.stdout
