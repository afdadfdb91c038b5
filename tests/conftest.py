"""Shared test setup: never let a test reach a model hub; keep the judge cache and checkpoints out of the checkout.

This folder is on sys.path (pytest puts a conftest's folder there), so every tier imports the helpers beside it:
cli_helpers.py (`cli(...)`: the CLI in-process; the file writers). Each tier's own helpers sit
in its folder: fast/metrics_helpers.py (sample texts; scripted verdicts of both modes, MODES for tests parametrised by
verdict mode), fast/reports_helpers.py, fast/calibration_helpers.py, fast/inputs_helpers.py, fast/setup_helpers.py, real/real_helpers.py.
A test module never imports another test module."""
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
