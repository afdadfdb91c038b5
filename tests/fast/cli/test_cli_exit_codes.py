"""Exit codes: a crash (a bug) is 3, never 1, so CI can tell it from a failed gate."""
from __future__ import annotations

from pathlib import Path

from localragas.run import runner
from localragas.cli.options import EXIT_INTERNAL_ERROR

from cli_helpers import cli

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"


def test_an_unexpected_exception_exits_3_with_its_traceback(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("something broke")

    monkeypatch.setattr(runner, "run_prepared", boom)
    r = cli("eval", str(EXAMPLE), "--judge", "fake", "--embedder", "fake", "--no-progress")
    assert r.exit_code == EXIT_INTERNAL_ERROR == 3
    assert "internal error RuntimeError: something broke" in r.output
    assert "Traceback" in r.output


def test_usage_errors_keep_click_exit_code_2():
    r = cli("eval", str(EXAMPLE), "--limit", "0")
    assert r.exit_code == 2
