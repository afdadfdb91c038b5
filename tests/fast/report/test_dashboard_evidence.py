"""`localragas view`: the side-by-side's samples that moved most show their evidence in each run's stored JSON report
(the report's one-line summary, report/evidence.py `brief`), and say so in one line where a report is gone."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from localragas.report import read_json
from localragas.report.evidence import brief

from cli_helpers import cli

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume", "--no-gate"]


@pytest.fixture
def two_runs(tmp_path) -> tuple[Path, Path]:
    """The examples judged by sentence, then by claims (faithfulness moves), each with its JSON report."""
    sentences, claims = tmp_path / "sentences.json", tmp_path / "claims.json"
    for out, extra in ((sentences, []), (claims, ["--metric-option", "faithfulness.statements=claims"])):
        r = cli("eval", EXAMPLE, *FAST, *extra, "--out", out)
        assert r.exit_code == 0, r.output
    return sentences, claims


def _moved(page: str) -> tuple[str, list[str]]:
    """The side-by-side's faithfulness table of moved samples: its first sample id and the evidence lines shown."""
    side = page[page.index('id="compare"'):page.index('id="runs"')]
    table = side[side.index("<caption>faithfulness</caption>"):]
    table = table[:table.index("</table>")]
    sample = re.search(r"<tr><td>([^<]+)</td>", table).group(1)
    row = table[table.index(f"<tr><td>{sample}</td>"):]
    row = row[:row.index("</tr>")]
    return sample, re.findall(r'<p><span class="side-label">(?:base|new)</span> (.*?)</p>', row)


def _view(tmp_path: Path) -> str:
    out = tmp_path / "view.html"
    r = cli("view", "--out", out)
    assert r.exit_code == 0, r.output
    return out.read_text()


def test_a_moved_sample_shows_its_evidence_from_each_report(two_runs, tmp_path):
    sample, lines = _moved(_view(tmp_path))
    expected = []
    for path in two_runs:
        report = read_json(path)
        got = next(s for s in report.samples if s.id == sample).metrics["faithfulness"]
        expected.append(brief("faithfulness", got))
    assert expected[0] != expected[1]  # judged by sentence, then by claims: the evidence differs
    assert [unescape(line) for line in lines] == expected
    assert not any('"' in line or "<" in unescape(line) and "<" in line for line in lines)  # escaped in the page


def test_a_deleted_report_is_said_in_one_line_and_the_page_still_shows(two_runs, tmp_path):
    two_runs[0].unlink()
    sample, lines = _moved(_view(tmp_path))
    assert lines[0] == f"run 1: its report {two_runs[0].resolve()} is gone"
    report = read_json(two_runs[1])
    got = next(s for s in report.samples if s.id == sample).metrics["faithfulness"]
    assert unescape(lines[1]) == brief("faithfulness", got)


def test_an_unreadable_report_is_said_in_one_line(two_runs, tmp_path):
    two_runs[1].write_text("{not json")
    sample, lines = _moved(_view(tmp_path))
    assert lines[1].startswith(f"run 2: its report {two_runs[1].resolve()} could not be read (")
    assert unescape(lines[0]) == brief("faithfulness", next(
        s for s in read_json(two_runs[0]).samples if s.id == sample).metrics["faithfulness"])
