"""README "What localragas promises": every test a promise names exists (file and function), so a promise never
points at a renamed or deleted test."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## What localragas promises", 1)[1].split("\n## ", 1)[0]


def test_every_test_a_promise_names_exists():
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", SECTION)
    assert len(named) >= 20
    missing = []
    for path, func in named:
        file = ROOT / path
        if not file.is_file() or (func and not re.search(rf"^def {func}\(", file.read_text(encoding="utf-8"), re.M)):
            missing.append(f"{path}::{func}" if func else path)
    assert not missing, missing


def test_every_promise_is_backed_by_a_named_test():
    promises = [line for line in SECTION.splitlines() if line.startswith("- **")]
    assert len(promises) >= 10
    assert all("`tests/" in p for p in promises), [p[:60] for p in promises if "`tests/" not in p]
