"""Relative links in Markdown: where they point, and the anchors (GitHub's heading slugs) a page has."""
from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code (a `[x](y)` there is not a link)."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, spaces and hyphens kept),
    spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page; a repeated heading gets -1, -2 … as on GitHub."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+?)#*$", FENCE.sub("", text), flags=re.M):
        s = slug(heading)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def relative_links(text: str) -> list[str]:
    """The relative targets of a page's links and images (no scheme, not mailto:)."""
    targets = [a or b for a, b in LINK.findall(prose(text))]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def broken_links(page: Path) -> list[str]:
    """Each relative link of `page` whose file, folder or anchor does not exist, as 'page: target (why)'."""
    problems = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{page.name}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            problems.append(f"{page.name}: {target} (no such heading in {dest.name})")
    return problems
