"""Report writers: terminal table, JSON, CSV, Markdown, JUnit XML (and HTML in html_report). Files are written
atomically (temporary file, then rename).

The names below are imported on first use (PEP 562): a command imports the writers of the outputs asked for only
(`import localragas.report.terminal` loads no CSV, Markdown or JUnit writer)."""
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ..core.lazy_exports import lazy_exports as _lazy_exports

_EXPORTS = {
    "print_report": "terminal",
    "read_json": "json_report",
    "write_csv": "csv_report",
    "write_json": "json_report",
    "write_junit": "junit",
    "write_markdown": "markdown",
}

__all__ = sorted(_EXPORTS)

if _TYPE_CHECKING:  # the names for type checkers ("as": re-exported)
    from .csv_report import write_csv as write_csv
    from .json_report import read_json as read_json, write_json as write_json
    from .junit import write_junit as write_junit
    from .markdown import write_markdown as write_markdown
    from .terminal import print_report as print_report


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
