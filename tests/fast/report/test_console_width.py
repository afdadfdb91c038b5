"""Terminal reports in CI logs and pipes get 120 columns, not rich's 80-column fallback."""
from __future__ import annotations

from localragas.report.console import LOG_WIDTH, report_console


def test_report_console_is_wide_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert report_console().width == LOG_WIDTH == 120  # pytest captures stdout: not a terminal


def test_columns_wins(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert report_console().width == 100
