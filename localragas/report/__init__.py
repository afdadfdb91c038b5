"""Report writers: terminal table, JSON, CSV, Markdown, JUnit XML (and HTML in html_report). Files are written
atomically (temporary file, then rename)."""
from .csv_report import write_csv
from .json_report import read_json, write_json
from .junit import write_junit
from .markdown import write_markdown
from .terminal import print_report

__all__ = ["print_report", "read_json", "write_csv", "write_json", "write_junit", "write_markdown"]
