"""README.md and docs/*.md: every relative link and image points at a file that exists and, for a '#anchor' into a
Markdown page, at a heading that page has."""
from __future__ import annotations

from pathlib import Path

from doc_links import anchors, broken_links, relative_links, slug

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_resolves():
    problems = [p for page in PAGES for p in broken_links(page)]
    assert not problems, "\n".join(problems)


def test_the_readme_links_into_the_docs():
    assert sum(t.startswith("docs/") for t in relative_links(PAGES[0].read_text(encoding="utf-8"))) >= 10


def test_slugs_follow_github():
    assert slug("Offline, no telemetry") == "offline-no-telemetry"
    assert slug("`localragas eval DATA`") == "localragas-eval-data"
    assert slug("Never a silent 0") == "never-a-silent-0"
    assert slug("Install and first run (one command)") == "install-and-first-run-one-command"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# Here\n")
    page = tmp_path / "page.md"
    page.write_text("[a](there.md#here) [b](there.md#gone) [c](missing.md) `[d](x.md)` [e](https://x.org/y)\n")
    assert broken_links(page) == ["page.md: there.md#gone (no such heading in there.md)",
                                  "page.md: missing.md (no such file)"]
