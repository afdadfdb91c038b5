"""The run dashboard (`localragas view`, localragas/report/dashboard.py) in real headless Chromium: 20 runs of the
examples (fake judge) render with no console error and no network request, in under a second, and show their trends,
runs and two runs side by side.

Needs the Debian packages chromium and chromium-driver and the pip package selenium; skips (never fails) without them.
LOCALRAGAS_SCREENSHOT_DIR: the screenshot is copied there.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from chromium import NEEDS_CHROMIUM, start_chromium

pytestmark = NEEDS_CHROMIUM
try:
    from selenium.webdriver.common.by import By
except ImportError as exc:  # missing or broken: skip, never fail
    pytest.skip(f"selenium unavailable ({exc}): pip install selenium", allow_module_level=True)

from localragas import evaluate, load_samples  # noqa: E402
from localragas.report.dashboard import render_dashboard  # noqa: E402
from localragas.run.history import History  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"
RUNS = 20


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    """20 runs of the examples in a fresh history, each with a few answers changed, and their page."""
    history = tmp_path_factory.mktemp("history") / "history.sqlite"
    samples, _ = load_samples(EXAMPLE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCALRAGAS_STATE_DIR", str(history.parent))
        for i in range(RUNS):
            changed = [s.model_copy(update={"answer": "I do not know."}) if (n + i) % 7 == 0 else s
                       for n, s in enumerate(samples)]
            evaluate(changed, judge="fake", embedder="fake", cache=False, progress=False, tags=[f"run{i}"])
    path = history.parent / "view.html"
    with History(history) as h:
        path.write_text(render_dashboard(h), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    d = start_chromium(tmp_path_factory.mktemp("chromium-profile"), 1366, 900, ("browser", "performance"))
    yield d
    d.quit()


def test_twenty_runs_render_in_under_a_second_with_no_error_and_no_request(driver, page_file, tmp_path):
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get_log("performance")
    started = time.perf_counter()
    driver.get(page_file.as_uri())
    wall = time.perf_counter() - started
    loaded_ms = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime")
    print(f"dashboard of {RUNS} runs: load event at {loaded_ms:.0f} ms, driver.get {wall:.2f} s")
    assert 0 < loaded_ms < 1000
    assert not [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    requests = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert all(u == page_file.as_uri() for u in urls), urls  # the page itself, nothing else
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    # what it shows: one trend a metric, every run, the newest two side by side
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.trend")) == 4
    assert len(driver.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")) == RUNS
    side = driver.find_element(By.ID, "compare")
    assert "run 19 → run 20" in side.text and side.find_element(By.CSS_SELECTOR, "svg.plot").is_displayed()
    band = driver.find_element(By.CSS_SELECTOR, "svg.trend polygon.band")
    assert band.size["width"] > 300  # drawn across the runs
    shot = tmp_path / "dashboard.png"
    assert driver.save_screenshot(str(shot))
    if os.environ.get("LOCALRAGAS_SCREENSHOT_DIR"):
        out = Path(os.environ["LOCALRAGAS_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, out / "dashboard.png")


def test_the_runs_table_fits_a_1366_px_window(driver, tmp_path):
    """Runs of a data file deep in long folders, each with a JSON report as deep, four metrics: the runs table shows
    whole in a 1,366 px window (its box does not scroll), its long paths as file names wrapped to fit."""
    from cli_helpers import cli  # noqa: PLC0415

    folder = tmp_path / ("a-long-folder-name-for-the-evaluation-sets-" * 3)
    folder.mkdir(parents=True)
    data = folder / "the-evaluation-set-of-the-support-assistant.jsonl"
    data.write_bytes(EXAMPLE.read_bytes())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
        for i in range(5):
            r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume",
                    "--no-progress", "--no-gate", "--tag", f"nightly,release-candidate-{i}", "--name",
                    f"retriever variant number {i}", "--out", folder / f"report-of-the-nightly-run-{i}.json")
            assert r.exit_code == 0, r.output
        with History(tmp_path / "state" / "history.sqlite") as h:
            page = tmp_path / "view.html"
            page.write_text(render_dashboard(h), encoding="utf-8")
    driver.get(page.as_uri())
    box = driver.find_element(By.CSS_SELECTOR, "#runs .scroll")
    widths = driver.execute_script("const b = arguments[0]; return [b.scrollWidth, b.clientWidth, "
                                   "document.documentElement.scrollWidth, window.innerWidth]", box)
    assert widths[0] <= widths[1], widths  # the table fits its box: nothing cut off, nothing to scroll
    assert widths[2] <= widths[3], widths  # nor the page wider than the window
    assert len(driver.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")) == 5
