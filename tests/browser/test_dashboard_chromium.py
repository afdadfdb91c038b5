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
