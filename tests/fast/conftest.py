"""Fixtures shared by the fast tier's tests; its plain helpers are in cli_helpers.py (the CLI runner, file writers),
metrics_helpers.py and reports_helpers.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from localragas import models

from cli_helpers import write_jsonl


@pytest.fixture
def data(tmp_path) -> Path:
    """A valid two-sample JSONL dataset (d.jsonl) that every metric can score."""
    rows = [{"id": f"s{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red."],
             "answer": f"Item {i} is red.", "reference": f"Item {i} is red."} for i in range(2)]
    return write_jsonl(tmp_path / "d.jsonl", rows)


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    """An empty models folder, in $LOCALRAGAS_MODELS_DIR."""
    d = tmp_path / "models"
    d.mkdir()
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(d))
    return d


@pytest.fixture
def own_metrics():
    """The metric registry restored after the test: the custom metrics it declares are gone for the next one."""
    from localragas.metrics import registry

    saved = dict(registry._REGISTRY)
    yield registry._REGISTRY
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
