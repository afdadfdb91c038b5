"""Fixtures shared by the fast tier's tests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localragas import models


@pytest.fixture
def data(tmp_path) -> Path:
    """A valid two-sample JSONL dataset (d.jsonl) that every metric can score."""
    rows = [{"id": f"s{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red."],
             "answer": f"Item {i} is red.", "reference": f"Item {i} is red."} for i in range(2)]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    """An empty models folder, in $LOCALRAGAS_MODELS_DIR."""
    d = tmp_path / "models"
    d.mkdir()
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(d))
    return d
