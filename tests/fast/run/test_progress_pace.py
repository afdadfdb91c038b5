"""The progress line says a slow run's pace as seconds per sample, not "0.00 samples/s" (issue 47, item 13): a CI log
of a judge that takes 20 s a sample reads "20.0 s per sample"; a fast run keeps samples/s."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from localragas.run import progress

from cli_helpers import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"


def clock(step: float) -> SimpleNamespace:
    """A perf_counter that moves `step` seconds each time it is read."""
    now = [0.0]

    def perf_counter() -> float:
        now[0] += step
        return now[0]

    return SimpleNamespace(perf_counter=perf_counter)


@pytest.mark.parametrize(("step", "pace"), [(20.0, "20.0 s per sample"), (0.2, "5.00 samples/s")])
def test_the_progress_line_says_the_pace_a_person_reads(monkeypatch, step, pace):
    monkeypatch.setattr(progress, "time", clock(step))  # the progress display's clock only: read once a sample
    r = cli("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-gate",
            "-n", "2", "-m", "faithfulness", "--progress")
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if line.startswith("localragas: ")]
    assert lines and all(pace in line for line in lines), lines
    assert "0.00 samples/s" not in r.output


def test_rate_text():
    assert progress.rate_text(0.05) == "20.0 s per sample" and progress.rate_text(3.2) == "3.20 samples/s"
    assert progress.rate_text(0.5, "rows") == "2.0 s per row" and progress.rate_text(0.0) == "0.00 samples/s"
