"""A self-contained page of plots and tables (`compare --html`, `calibrate --html`): one HTML file styled as the
HTML report is (its html/style.css inlined, then html/plots.css and the plots' classes, svg.py STYLE), its plots
inline SVG (report/svg.py) filling the page's width, no script and no network request (a Content-Security-Policy
allows only its own style, by hash). Rendered by the jinja2 template report/templates/plots.html with autoescaping:
only the SVG goes in as markup."""
from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from .. import __version__
from .html_report import TEMPLATES, _asset, _sha256
from .svg import STYLE

# the width a figure is drawn at: about what it gets on a 1,366 px screen (the report's 1,240 px column, less its
# padding and the panel's), so its text shows at the size svg.py STYLE gives it; a pair side by side gets half
FULL_WIDTH = 1100
HALF_WIDTH = 540


@dataclass
class Section:
    heading: str = ""
    notes: list[str] = field(default_factory=list)  # paragraphs
    items: list[str] = field(default_factory=list)  # a bullet list
    figures: list[tuple[str, str]] = field(default_factory=list)  # (an <svg> made by report/svg.py, its caption)
    table: list[list[str]] = field(default_factory=list)  # its header row, then the rows
    css: str = ""  # "warning": set apart


def page_style() -> str:
    """The page's style: the report's, the plot page's, the plots' classes."""
    style = _asset("style.css") + _asset("plots.css") + STYLE
    if "</" in style:
        raise RuntimeError("localragas/report/html assets must not contain '</'")
    return style


def render_page(title: str, sections: list[Section], facts: list[str] | None = None) -> str:
    """The page: every text escaped, the figures' SVG as it was drawn (svg.py escapes the text it holds)."""
    style = page_style()
    csp = f"default-src 'none'; style-src '{_sha256(style)}'; base-uri 'none'; form-action 'none'"
    shown = [{"heading": s.heading, "notes": s.notes, "bullets": s.items, "css": s.css,
              "figures": [(Markup(svg), caption) for svg, caption in s.figures],
              "head": [(h, "") for h in s.table[0]] if s.table else [], "table": s.table} for s in sections]
    return TEMPLATES.get_template("plots.html").render(title=title, facts=facts or [], sections=shown,
                                                       style=Markup(style), csp=Markup(csp), version=__version__)
