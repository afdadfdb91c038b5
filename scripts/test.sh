#!/usr/bin/env bash
# The test run, the README's "Run the tests" command after the setup: lint (ruff, then mypy with its cache), the
# tiers that need no model (tests/fast, tests/research, tests/browser) on TEST_WORKERS processes (default: one per
# core, pytest-xdist), then the real tier (tests/real) alone, since a model process slows several-fold beside another.
# Each step prints its seconds; the first failing step stops the run with its exit code.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# compiled modules kept (__pycache__, git-ignored): each CLI test's child process loads the package instead of
# compiling it again (about 10% of the run's CPU when PYTHONDONTWRITEBYTECODE is set in the environment)
unset PYTHONDONTWRITEBYTECODE

step() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  "$@"
  echo "== $name: passed in $((SECONDS - start)) s"
}

step "ruff" "$PY" -m ruff check
step "mypy" "$PY" -m mypy
step "tests without a model (fast, research, browser)" \
  "$PY" -m pytest -q -m "not real" -n "${TEST_WORKERS:-auto}" --dist worksteal
step "tests with the real models (alone)" "$PY" -m pytest -q -m real
