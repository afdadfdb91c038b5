"""`localragas view` (localragas/report/dashboard.py): the run history as one offline page: each metric's trend with
its interval band and thresholds (SVG), the runs, two runs side by side from their stored per-sample scores; and
`--serve` on 127.0.0.1."""
from __future__ import annotations

import re
import urllib.error
import urllib.request

import pytest

import localragas
from localragas.core import paths
from localragas.report.dashboard import render_dashboard
from localragas.report.dashboard_server import serve, server_url
from localragas.report.dashboard_svg import trend_svg
from localragas.run.history import History, MetricRecord, RunRecord

from cli_helpers import cli, sample_rows, write_jsonl

FAKE = {"judge": "fake", "embedder": "fake", "cache": False, "progress": False,
        "metrics": ["faithfulness", "context_recall"]}


def _run(i, mean, threshold=0.5, status="passed", ci=(0.1, 0.2)):
    return RunRecord(id=i, started=f"2026-01-0{i}T00:00:00+00:00", verdict=status, metrics=[
        MetricRecord(metric="faithfulness", mean=mean, ci_low=mean - ci[0], ci_high=mean + ci[1],
                     threshold=threshold, status=status)])


def test_a_trend_draws_each_run_its_band_and_the_threshold_steps():
    svg = trend_svg("faithfulness", [_run(1, 0.6), _run(2, 0.4, status="failed"), _run(3, 0.7, threshold=0.65)])
    assert svg.count("<circle") == 3 and svg.count('class="point failed"') == 1
    band = re.search(r'<polygon class="band" points="([^"]+)"', svg).group(1).split()
    assert len(band) == 6  # the upper edge there and the lower back
    ys = [float(p.split(",")[1]) for p in band]
    assert ys[0] < ys[-1]  # the upper edge (0.7) above the lower (0.5): y grows downwards
    steps = re.search(r'<polyline class="threshold" points="([^"]+)"', svg).group(1).split()
    assert len({p.split(",")[1] for p in steps}) == 2  # 0.5 twice, then 0.65
    assert "gate threshold 0.50, 0.65" in svg
    assert 'aria-label="faithfulness over 3 run(s): first 0.600, last 0.700"' in svg
    assert "run 2 · 2026-01-02T00:00:00+00:00 · faithfulness 0.400 (95% CI 0.300–0.600)" in svg


def test_a_single_run_is_a_point_with_its_interval():
    svg = trend_svg("faithfulness", [_run(1, 0.6)])
    assert svg.count("<circle") == 1 and '<line class="ci"' in svg and "<polygon" not in svg


@pytest.fixture
def three_runs():
    rows = sample_rows(6)
    localragas.evaluate(rows, **FAKE, tags=["base"], thresholds={"faithfulness": 0.6})
    rows[2]["answer"] = "The moon is made of cheese."
    localragas.evaluate(rows, **FAKE, name="broken")
    localragas.evaluate(rows, **{**FAKE, "judge_options": {"calibration": "none"}}, metric_options={
        "faithfulness": {"verdicts": "json"}})
    return rows


def _page(**filters):
    with History() as h:
        return render_dashboard(h, **filters)


def test_the_page_is_offline_and_shows_trends_runs_and_two_runs_side_by_side(three_runs):
    page = _page()
    assert "<script" not in page and "http://" not in page and "https://" not in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert csp.startswith("default-src 'none'; style-src 'sha256-")
    assert page.count('<svg class="trend"') == 2  # faithfulness and context_recall, one dataset
    assert page.count("<tr><td>") >= 3 and ">broken<" in page and ">base<" in page
    side = page[page.index('id="compare"'):page.index('id="runs"')]
    assert "run 2 (broken) → run 3" in side
    # the newest and the run before it, drawn as compare --html draws them: a row per metric, its change and interval
    drawn = re.findall(r'<g class="(\w+)" data-metric="(\w+)" data-diff="([^"]+)" '
                       r'data-low="([^"]+)" data-high="([^"]+)"',
                       side[side.index('<svg class="plot"'):side.index('<table class="changes">')])
    assert [m for _, m, *_ in drawn] == ["faithfulness", "context_recall"]
    for verdict, metric, diff, low, high in drawn:
        assert float(low) <= float(diff) <= float(high)
        row = re.search(rf"<tr><td>{metric}</td><td>[^<]*</td><td>[^<]*</td><td>([^<]+)</td>.*?"
                        rf'<td class="verdict (\w+)">', side).groups()
        assert row == (f"{float(diff):+.3f}", verdict)
    # runs 2 and 3 measured faithfulness differently (json verdicts): named first, before the changes
    assert side.index("measured differently") < side.index('<table class="changes">')
    previous = page[page.index('id="previous"'):]
    assert "run 1 → run 2 (broken)" in previous and "Samples that moved most" in previous
    assert re.search(r"<td>s2</td><td>1\.000</td><td>0\.\d+</td><td>-[01]\.\d+</td>", previous)


def test_compare_chooses_the_pair_and_filters_choose_the_runs(three_runs):
    side = _page(pair=(1, 3))
    assert "run 1 → run 3" in side[side.index('id="compare"'):]
    only = _page(name="broken")
    assert "1 of 3 run(s)" in only and "(name broken)" in only and 'id="compare"' not in only


def test_view_writes_the_page_and_refuses_a_pair_it_does_not_show(three_runs, tmp_path):
    r = cli("view")
    assert r.exit_code == 0 and r.output == f"wrote {paths.state_dir() / 'view.html'}\n"
    assert (paths.state_dir() / "view.html").read_text().startswith("<!DOCTYPE html>")
    out = tmp_path / "runs.html"
    assert cli("view", "--out", out, "--compare", "1", "2").exit_code == 0 and "run 1 → run 2" in out.read_text()
    bad = cli("view", "--compare", "1", "9")
    assert bad.exit_code == 2 and "view --compare: no run 9 among the runs shown" in bad.output


def test_an_empty_history_says_how_runs_get_there():
    assert "No run recorded yet" in _page()


def test_serve_shows_the_page_on_localhost_only():
    server = serve(lambda: "<!DOCTYPE html><p>runs</p>")
    try:
        url = server_url(server)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # straight to 127.0.0.1
        assert url.startswith("http://127.0.0.1:")
        with opener.open(url, timeout=10) as got:
            assert got.read() == b"<!DOCTYPE html><p>runs</p>"
            assert got.headers["Content-Type"] == "text/html; charset=utf-8"
        with pytest.raises(urllib.error.HTTPError, match="404"):
            opener.open(url + "other", timeout=10)
    finally:
        server.shutdown()
        server.server_close()


def _series(page: str) -> list[str]:
    """The series' headings: where their runs read the samples, and how many runs."""
    return [re.sub(r"<[^>]+>", "", h) for h in re.findall(r'<section class="trend-set">\s*<h2>(.*?)</h2>', page, re.S)]


def test_series_are_grouped_by_the_datasets_content_wherever_it_was_read(tmp_path):
    """The same file at two paths and the same samples through evaluate() are one series (their sample ids), and
    the page says a series is a dataset's content; another set of samples is another series."""
    rows = sample_rows(4)
    first = write_jsonl(tmp_path / "data.jsonl", rows)
    (tmp_path / "copy").mkdir()
    second = write_jsonl(tmp_path / "copy" / "same.jsonl", rows)
    fast = ("--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "--metrics", "faithfulness,context_recall")
    for data in (first, second):
        assert cli("eval", data, *fast).exit_code == 0
    localragas.evaluate(rows, **FAKE)
    localragas.evaluate([{**row, "answer": "Nothing is red."} for row in rows], **FAKE)  # answered anew: same set
    localragas.evaluate(sample_rows(2), **FAKE)  # other samples
    out = tmp_path / "view.html"
    assert cli("view", "--out", out).exit_code == 0
    page = out.read_text()
    series = _series(page)
    assert len(series) == 2, series
    same, other = series  # in the order of their first runs
    assert same.startswith(f"evaluate(), {second}, {first} · 4 samples · content ") and same.endswith("4 run(s)")
    assert other.startswith("evaluate() · 2 samples") and other.endswith("1 run(s)")
    assert page.count('<svg class="trend"') == 4
    assert "A series is one dataset's content (its sample ids), wherever the runs read it" in page


def test_side_by_side_is_the_run_before_on_its_dataset_or_says_there_is_none(tmp_path):
    localragas.evaluate(sample_rows(3), **FAKE, name="a")
    localragas.evaluate(sample_rows(3), **FAKE, name="b")
    localragas.evaluate(sample_rows(2), **FAKE, name="other")  # the newest: another dataset, its first run
    out = tmp_path / "view.html"
    assert cli("view", "--out", out).exit_code == 0
    page = out.read_text()
    side = page[page.index('id="compare"'):page.index('id="runs"')]
    assert "run 2 (b) → run 3 (other)" not in side and "<details" not in side  # never beside an unrelated run
    assert ("The newest run, 3, is the first shown of its dataset (evaluate(), content " in side
            and "there is no run before it to put beside it. Choose two runs with localragas view --compare BASE "
                "NEW." in side)
    assert "run 1 (a) → run 2 (b)" in page[page.index('id="previous"'):]  # its own dataset's pair is still shown
    localragas.evaluate(sample_rows(3), **FAKE, name="c")  # the newest has a run before it on its dataset: beside it
    assert cli("view", "--out", out).exit_code == 0
    page = out.read_text()
    assert "run 2 (b) → run 4 (c)" in page[page.index('id="compare"'):page.index('id="runs"')]


def test_the_runs_table_fits_the_page_its_long_paths_shortened_and_wrapped(tmp_path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "evaluation-set-with-a-long-name.jsonl"
    deep.parent.mkdir(parents=True)
    write_jsonl(deep, sample_rows(2))
    report = tmp_path / ("reports-kept-for-the-release-" * 3) / "report.json"
    report.parent.mkdir(parents=True)
    assert cli("eval", deep, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
               "--no-gate", "--out", report).exit_code == 0
    out = tmp_path / "view.html"
    assert cli("view", "--out", out).exit_code == 0
    page = out.read_text()
    table = page[page.index('<div class="scroll"><table class="runs">'):]  # a table wider than the page scrolls
    row = table[table.index("<tbody>"):]
    row = row[:row.index("</tr>")]
    # the whole path is in the cell's title; the cell shows the file name, and may wrap (the CSS below)
    assert f'<td class="text" title="{deep} · content ' in row and ">evaluation-set-with-a-long-name.jsonl</td>" in row
    assert f'<td class="text" title="{report.resolve()}">report.json</td>' in row
    assert str(deep.parent) + "/" not in re.sub(r'title="[^"]*"', "", row)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert "table.runs th, table.runs td { white-space: normal;" in style  # not nowrap: the cells wrap to fit
    assert "table.runs td.text { overflow-wrap: anywhere; }" in style
    assert ".scroll { overflow-x: auto; max-width: 100%; }" in style


def test_the_runs_table_shows_each_runs_checked_share(tmp_path):
    from spot_helpers import label_items  # noqa: PLC0415

    rows = sample_rows(6)
    first = localragas.evaluate(rows, **FAKE)
    labels = tmp_path / "labels.jsonl"
    shown = label_items(first, labels, ("faithfulness",), n=12, answer=lambda x: 1)
    checked = localragas.evaluate(rows, **FAKE, labels=[labels])
    block = checked.spot_checks.metrics["faithfulness"]
    with History() as h:
        newest, older = h.runs()[:2]
    assert newest.checked == {"faithfulness": {"labelled": block.labelled, "items": block.items}}
    assert older.checked == {} and block.labelled == len(shown)
    page = _page()
    assert "<th title=" in page and ">checked by people</th>" in page
    assert f"<td class=\"text\">faithfulness {block.labelled}/{block.items}</td>" in page
