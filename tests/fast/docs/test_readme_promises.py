"""docs/promises.md: every test a promise names exists (file and function), so a promise never points at a renamed
or deleted test; every promise names a test; the README's "What localragas promises" links every promise."""
from __future__ import annotations

import re
from pathlib import Path

from doc_links import anchors

ROOT = Path(__file__).resolve().parents[3]
PROMISES = (ROOT / "docs" / "promises.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_SECTION = README.split("## What localragas promises", 1)[1].split("\n## ", 1)[0]


def promise_sections() -> dict[str, str]:
    """Each '## ' heading of docs/promises.md (one promise) and the text under it."""
    parts = re.split(r"^## (.+)$", PROMISES, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_test_a_promise_names_exists():
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", PROMISES)
    assert len(named) >= 50
    missing = []
    for path, func in named:
        file = ROOT / path
        if not file.is_file() or (func and not re.search(rf"^def {func}\(", file.read_text(encoding="utf-8"), re.M)):
            missing.append(f"{path}::{func}" if func else path)
    assert not missing, missing


def test_every_promise_is_backed_by_a_named_test():
    sections = promise_sections()
    assert len(sections) >= 17
    assert all("`tests/" in body for body in sections.values()), [t for t, b in sections.items() if "`tests/" not in b]


def test_the_readme_links_every_promise():
    linked = set(re.findall(r"\(docs/promises\.md#([\w-]+)\)", README_SECTION))
    slugs = anchors(PROMISES)
    assert linked <= slugs, linked - slugs
    wanted = {s for s in slugs if s != "what-localragas-promises"}
    assert wanted <= linked, wanted - linked
