"""scripts/setup.sh installs what `localragas eval` needs with its defaults (PyTorch, the llama.cpp wheel, localragas
with the embedder, the default judge) and more only on request: SETUP_EXTRAS=transformers (the transformers judge
backend), SETUP_EXTRAS=test (everything the test suite needs, the README's test command). Run as written with the
stand-ins of setup_helpers.py, which record each package pip is asked for by name and each model pulled."""
from __future__ import annotations

import pytest

from setup_helpers import GGUF, QWEN_GGUF, Checkout

TRANSFORMERS = ("gguf>=0.10", "accelerate>=1", "xgrammar==0.2.8")
TEST = ("-e .[test]", "llama-cpp-python[server]==0.3.36")


@pytest.fixture
def checkout(tmp_path) -> Checkout:
    return Checkout(tmp_path)


def _asked(checkout: Checkout) -> str:
    """What pip was asked to install by name and which models were pulled, one line each."""
    return "\n".join(line for line in checkout.log() if line.startswith(("pip ", "pull ")))


def test_by_default_only_what_eval_needs_is_installed(checkout):
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    asked = _asked(checkout)
    assert "pip install -q -e .[llamacpp,embed]" in asked.splitlines()
    assert "pull qwen2.5-1.5b" in asked.splitlines()  # the default judge, and no other model
    assert not [x for x in (*TRANSFORMERS, *TEST, "[all]", "smollm2") if x in asked], asked
    assert f"smoke {checkout.root / 'models' / QWEN_GGUF}" in checkout.log()  # one token with the default judge


def test_transformers_adds_its_backend_only(checkout):
    r = checkout.setup(SETUP_EXTRAS="transformers")
    assert r.returncode == 0, r.stdout + r.stderr
    asked = _asked(checkout)
    assert all(x in asked for x in TRANSFORMERS) and "--no-deps xgrammar==0.2.8" in asked  # triton left out
    assert not [x for x in (*TEST, "smollm2") if x in asked], asked


@pytest.mark.parametrize("extras", ["test", "test,transformers", " transformers , test "])
def test_test_adds_everything_the_suite_needs(checkout, extras):
    r = checkout.setup(SETUP_EXTRAS=extras)
    assert r.returncode == 0, r.stdout + r.stderr
    asked = _asked(checkout)
    assert all(x in asked for x in (*TRANSFORMERS, *TEST)), asked
    assert "pull qwen2.5-1.5b smollm2-135m" in asked.splitlines()  # tests/real judges with both
    assert f"smoke {checkout.root / 'models' / GGUF}" in checkout.log()  # the small judge loads in 0.1 s


def test_an_unknown_extra_stops_setup_before_anything_is_installed(checkout):
    r = checkout.setup(SETUP_EXTRAS="test,tests")
    assert r.returncode == 2
    assert "error: SETUP_EXTRAS: unknown 'tests'; known: test, transformers (comma-separated)" in r.stderr
    assert checkout.log() == []
