"""The page of `localragas review --serve` (served by report/review_server.py): the drawn items as
report/review_view.py shows them, embedded as JSON and drawn by html/review.js through textContent only, with
buttons and keys; each verdict is posted to the server that served the page. Like the report and the dashboard it
loads nothing from elsewhere: its Content-Security-Policy allows its own style and script (by hash) and requests to
its own origin only (`connect-src 'self'`, for the posts)."""
from __future__ import annotations

import json
from typing import Callable

from markupsafe import Markup

from ..core.printable import printable
from ..quality.review_draw import Shown
from ..quality.review_session import ReviewSession
from .html_report import TEMPLATES, _asset, _sha256, script_safe
from .review_view import ItemView

LABEL_WORDS = {1: "1", 0: "0", None: "skip"}  # a label as the page's data holds it


def _style_and_script() -> tuple[str, str]:
    style, script = _asset("review.css"), _asset("review.js")
    if "</" in style + script:  # an inlined asset must not be able to close its own element
        raise RuntimeError("localragas/report/html/review.css and review.js must not contain '</'")
    return style, script


def review_csp(header: bool = True) -> str:
    """The page's Content-Security-Policy, sent as a header and in the page: its own style and script by hash,
    requests to its own origin only, no frame, form or base. `frame-ancestors` only in the header (a browser ignores
    it in a <meta> element, and says so in its console)."""
    style, script = _style_and_script()
    return (f"default-src 'none'; style-src '{_sha256(style)}'; script-src '{_sha256(script)}'; "
            "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"
            + ("; frame-ancestors 'none'" if header else ""))


def review_page(session: ReviewSession, view_of: Callable[[Shown], ItemView], *, token: str, report: str,
                show_judge: bool = False, next_step: str = "") -> str:
    """The page for the session as it stands now (a reload shows what is done): every drawn item with this
    reviewer's label where there is one; the judge's verdict only with show_judge (else not in the page at all)."""
    from .. import __version__  # noqa: PLC0415

    style, script = _style_and_script()
    items = []
    for position, shown in enumerate(session.items, 1):
        view = view_of(shown).as_dict()
        if not show_judge:
            view.pop("judge")
        done = session.done.get(shown.item.key)
        if done is not None:
            view.update(label=LABEL_WORDS[done.label], note=done.note)
        items.append({**view, "position": position})
    data = {"reviewer": session.reviewer, "total": session.total, "token": token, "items": items}
    return TEMPLATES.get_template("review.html").render(
        csp=Markup(review_csp(header=False)), style=Markup(style), script=Markup(script),
        data=Markup(script_safe(json.dumps(data, ensure_ascii=False, separators=(",", ":")))),
        title=f"localragas review — {len(session.done)} of {session.total} done", report=printable(report),
        reviewer=session.reviewer, labels=str(session.path), done=len(session.done), total=session.total,
        next=next_step, version=__version__)
