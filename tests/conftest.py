"""Shared test setup: never let a test reach a model hub; keep the judge cache and checkpoints out of the checkout."""
import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(scope="session", autouse=True)
def _session_state(tmp_path_factory):
    """Module- and session-scoped fixtures run before _isolated_state: their state (evaluate() caches judge replies
    by default) goes here, never into the checkout's .localragas."""
    patch = pytest.MonkeyPatch()
    patch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path_factory.mktemp("session-state")))
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """Each test gets its own .localragas state folder (cache, run checkpoints)."""
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
