"""Which models folder is used: $LOCALRAGAS_MODELS_DIR, else the source checkout's models/, else the user's models
folder (an installed wheel); `localragas models path --dir` prints it. A judge path that names no file is refused
with its own message (exit 2)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from localragas.judges import catalogue

from cli_helpers import code_and_output as cli

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "rag_samples.jsonl"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME is the Linux data folder")


@pytest.fixture
def installed(monkeypatch, tmp_path) -> Path:
    """localragas as an installed (non-editable) package: no source checkout next to it; the user data folder in
    tmp_path. Returns the user's models folder it must use."""
    monkeypatch.delenv(catalogue.MODELS_DIR_ENV, raising=False)
    monkeypatch.setattr(catalogue, "checkout_models_dir", lambda: None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data" / "localragas" / "models"


def test_a_source_checkout_uses_its_own_models_folder(monkeypatch):
    monkeypatch.delenv(catalogue.MODELS_DIR_ENV, raising=False)
    assert catalogue.checkout_models_dir() == REPO / "models"  # where scripts/setup.sh and the tests put them
    assert catalogue.models_dir_source() == (REPO / "models", "the source checkout")


@linux_only
def test_an_installed_package_uses_the_user_models_folder(installed):
    assert catalogue.models_dir_source() == (installed, "the user's models folder")
    code, out = cli("models", "path", "--dir")
    assert code == 0 and out.strip() == str(installed)
    code, out = cli("models", "list")
    assert code == 0 and f"models folder: {installed} (the user's models folder)" in out


def test_the_environment_variable_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, str(tmp_path / "shared"))
    assert catalogue.checkout_models_dir() is not None  # over the checkout's folder
    code, out = cli("models", "path", "--dir")
    assert code == 0 and out.strip() == str(tmp_path / "shared")
    monkeypatch.setattr(catalogue, "checkout_models_dir", lambda: None)  # and over the user's
    assert catalogue.models_dir_source() == (tmp_path / "shared", f"${catalogue.MODELS_DIR_ENV}")


def test_models_path_takes_a_name_or_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, str(tmp_path))
    assert cli("models", "path")[0] == 2
    assert cli("models", "path", "smollm2-135m", "--dir")[0] == 2
    code, out = cli("models", "path", "smollm2-135m")
    assert code == 2 and f"is not in {tmp_path}; get it with: localragas models pull smollm2-135m" in out


@linux_only
def test_a_model_left_in_dot_models_is_pointed_at_not_used(installed, tmp_path):
    old = tmp_path / "models" / catalogue.spec("smollm2-135m").filename
    old.parent.mkdir()
    old.write_bytes(b"GGUF")
    code, out = cli("models", "path", "smollm2-135m")
    assert code == 2 and f"is not in {installed}" in out
    assert f"a copy is in {old.parent}: use it with {catalogue.MODELS_DIR_ENV}={old.parent}" in out


@pytest.mark.parametrize("judge, shown", [
    ("/nope/model.gguf", "judge model file not found: /nope/model.gguf; check the path"),
    ("llamacpp:/nope/model.gguf", "judge model file not found: /nope/model.gguf; check the path"),
    ("nope/model.gguf", "judge model file not found: nope/model.gguf (looked for {cwd}/nope/model.gguf)"),
])
def test_a_missing_gguf_judge_exits_2_naming_the_file(judge, shown, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = cli("eval", EXAMPLE, "--judge", judge, "--embedder", "fake", "--no-progress", "--no-cache")
    assert code == 2, out
    assert shown.format(cwd=tmp_path) in out and "unknown judge" not in out and "Traceback" not in out
    assert "qwen2.5-1.5b" in out and "localragas models list" in out  # the hint: a catalogue judge by name
