"""Fixtures shared by the fast tier's tests; the plain helpers are in ../cli_helpers.py (the CLI runner, file writers,
shared by every tier), metrics_helpers.py (samples, scripted verdicts of both modes), reports_helpers.py and
spot_helpers.py (reports with judged items and text, people's labels on a plan's draws)."""
from __future__ import annotations

from pathlib import Path

import pytest

from localragas.judges import catalogue

from cli_helpers import sample_rows, write_jsonl


@pytest.fixture
def data(tmp_path) -> Path:
    """A valid two-sample JSONL dataset (d.jsonl) that every metric can score."""
    return write_jsonl(tmp_path / "d.jsonl", sample_rows(2))


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    """An empty models folder, in $LOCALRAGAS_MODELS_DIR."""
    d = tmp_path / "models"
    d.mkdir()
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, str(d))
    return d


@pytest.fixture
def own_metrics():
    """The metric registry restored after the test: the custom metrics it declares are gone for the next one."""
    from localragas.metrics import registry

    saved = dict(registry._REGISTRY)
    yield registry._REGISTRY
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
