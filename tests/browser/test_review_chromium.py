"""`localragas review --serve` (localragas/report/review_server.py, review_page.py, html/review.js) in real headless
Chromium: three items labelled through the page (two keys and a button, one with a note) are three lines of the
labels file; a reload resumes at the fourth; no console error, and no request leaves 127.0.0.1.

Needs the Debian packages chromium and chromium-driver and the pip package selenium; skips (never fails) without them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chromium import NEEDS_CHROMIUM, start_chromium

pytestmark = NEEDS_CHROMIUM
try:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as exc:  # missing or broken: skip, never fail
    pytest.skip(f"selenium unavailable ({exc}): pip install selenium", allow_module_level=True)

from localragas.quality.review_session import ReviewSession, drawn  # noqa: E402
from localragas.report import read_json  # noqa: E402
from localragas.report.dashboard_server import server_url  # noqa: E402
from localragas.report.review_page import review_page  # noqa: E402
from localragas.report.review_server import serve_review  # noqa: E402
from localragas.report.review_view import item_view  # noqa: E402

from cli_helpers import reviewable_run  # noqa: E402


@pytest.fixture
def served(tmp_path):
    run = reviewable_run(tmp_path)
    labels = tmp_path / "run.labels.jsonl"
    session = ReviewSession.open(drawn(read_json(run), n=3), labels, "erin")
    server = serve_review(session, lambda token: review_page(session, lambda s: item_view(s.item), token=token,
                                                             report=str(run)))
    yield session, server_url(server), labels
    server.shutdown()
    server.server_close()


@pytest.fixture
def driver(tmp_path):
    d = start_chromium(tmp_path / "chromium-profile", 1280, 900, ("browser", "performance"))
    yield d
    d.quit()


def _progress(driver) -> str:
    return driver.find_element(By.ID, "progress").text


def press(driver, key: str) -> None:
    """A key pressed on the page (to whatever has the focus), as a person would."""
    ActionChains(driver).send_keys(key).perform()


def test_label_three_items_in_the_page_reload_and_it_resumes_at_the_fourth(driver, served):
    session, url, labels = served
    total = session.total
    driver.get(url)
    wait = WebDriverWait(driver, 10)
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith(f"1/{total}"))
    assert _progress(driver).startswith(f"0 of {total} done")
    press(driver, "y")
    wait.until(lambda d: _progress(d).startswith(f"1 of {total} done"))
    press(driver, "c")  # into the note, then out of it with Escape, then n
    note = driver.find_element(By.ID, "note")
    assert driver.switch_to.active_element == note and note.get_attribute("value") == ""
    press(driver, "the chunk is about something else")
    press(driver, Keys.ESCAPE)
    press(driver, "n")
    wait.until(lambda d: _progress(d).startswith(f"2 of {total} done"))
    driver.find_element(By.ID, "skip").click()
    wait.until(lambda d: _progress(d).startswith(f"3 of {total} done"))
    got = [json.loads(x) for x in labels.read_text(encoding="utf-8").splitlines()]
    assert [(x["label"], x["reviewer"]) for x in got] == [(1, "erin"), (0, "erin"), (None, "erin")]
    assert got[1]["note"] == "the chunk is about something else"
    assert [x["key"] for x in got] == [s.item.key for s in session.items[:3]]

    driver.get("about:blank")
    driver.get_log("performance")
    driver.get(url)  # a reload: the page as the labels file stands
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith(f"4/{total}"))
    assert _progress(driver).startswith(f"3 of {total} done")
    assert not [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    requests = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(url) for u in urls), urls  # nothing beyond 127.0.0.1


def test_back_shows_the_previous_item_with_its_label_and_a_new_one_replaces_it(driver, served):
    session, url, labels = served
    driver.get(url)
    wait = WebDriverWait(driver, 10)
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith("1/"))
    press(driver, "y")
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith("2/"))
    press(driver, "b")
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith("1/"))
    assert "a new label replaces it" in driver.find_element(By.ID, "status").text
    press(driver, "n")
    wait.until(lambda d: d.find_element(By.ID, "heading").text.startswith("2/"))
    got = [json.loads(x) for x in Path(labels).read_text(encoding="utf-8").splitlines()]
    assert [x["label"] for x in got] == [1, 0] and got[0]["key"] == got[1]["key"]
