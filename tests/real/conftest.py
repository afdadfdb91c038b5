"""Real tier: the real judge models and embedder. Missing models fail loudly (the README's test command pulls them),
never skip."""
from __future__ import annotations

import os

import pytest

from localragas.judges import catalogue
from localragas.core.errors import LocalragasError

pytest.register_assert_rewrite("real_helpers")  # its checks report their values as the tests' own asserts do


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/real/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.real)


def _require(name: str):
    try:
        return catalogue.path(name)
    except LocalragasError as e:
        pytest.fail(f"real-tier model missing: {e}")


def _judge(name: str):
    from localragas.judges import get_judge

    _require(name)
    judge = get_judge(name)
    yield judge
    judge.close()


@pytest.fixture(scope="session")
def smol_judge():
    yield from _judge("smollm2-135m")


@pytest.fixture(scope="session")
def qwen_judge():
    yield from _judge("qwen2.5-1.5b")


@pytest.fixture(scope="session")
def minilm():
    from localragas import get_embedder

    return get_embedder("minilm-l6")
