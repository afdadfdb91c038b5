"""A self-contained page of plots and tables (`compare --html`, `calibrate --html`): one HTML file, its style inline,
its plots inline SVG (report/svg.py), no script and no network request (a Content-Security-Policy allows only its
own style). Rendered by the jinja2 template report/templates/plots.html with autoescaping: only the SVG goes in as
markup."""
from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from .. import __version__
from .html_report import TEMPLATES, _sha256
from .svg import STYLE

_PAGE_STYLE = """
:root { color-scheme: light dark; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; background: Canvas; color: CanvasText; }
main { max-width: 960px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 1.6em; }
section.warning { border-left: 4px solid #c77700; padding: 2px 12px; background: color-mix(in srgb, #c77700 8%, Canvas); }
figure { display: inline-block; vertical-align: top; margin: 8px 16px 8px 0; max-width: 100%; }
figcaption { font-size: 0.85rem; opacity: 0.8; max-width: 320px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid color-mix(in srgb, CanvasText 15%, Canvas); text-align: left; }
footer { margin-top: 2em; font-size: 0.8rem; opacity: 0.7; }
"""


@dataclass
class Section:
    heading: str = ""
    notes: list[str] = field(default_factory=list)  # paragraphs
    items: list[str] = field(default_factory=list)  # a bullet list
    figures: list[tuple[str, str]] = field(default_factory=list)  # (an <svg> made by report/svg.py, its caption)
    table: list[list[str]] = field(default_factory=list)  # its header row, then the rows
    css: str = ""  # "warning": set apart


def render_page(title: str, sections: list[Section]) -> str:
    """The page: every text escaped, the figures' SVG as it was drawn (svg.py escapes the text it holds)."""
    style = STYLE + _PAGE_STYLE
    csp = f"default-src 'none'; style-src '{_sha256(style)}'; base-uri 'none'; form-action 'none'"
    shown = [Section(s.heading, s.notes, s.items, [(Markup(svg), caption) for svg, caption in s.figures], s.table, s.css)
             for s in sections]
    return TEMPLATES.get_template("plots.html").render(title=title, sections=shown, style=Markup(style),
                                                       csp=Markup(csp), version=__version__)
