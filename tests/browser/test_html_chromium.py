"""The HTML report in real headless Chromium: loads cleanly, sorts, filters, drills down, and runs no injected script.

Needs the Debian packages chromium and chromium-driver and the pip package selenium; skips (never fails) without them.
Screenshots go to the test's tmp_path and, when LOCALRAGAS_SCREENSHOT_DIR is set, are copied there.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from chromium import NEEDS_CHROMIUM, start_chromium

pytestmark = NEEDS_CHROMIUM
try:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError as exc:  # missing or broken: skip, never fail
    pytest.skip(f"selenium unavailable ({exc}): pip install selenium", allow_module_level=True)

from localragas import evaluate, load_samples  # noqa: E402
from localragas.report.html_report import write_html  # noqa: E402
from localragas.data.schema import Report, Sample  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"
SCRIPT = "<script>__pwned=1;alert(1)</script>"  # no '.': the fake judge splits claims at sentence ends
IMG = '"><img src=x onerror=__pwned=2>'
HOSTILE = Sample(
    id=f"evil{IMG}", category="product-docs", question="Which storage tiers does Acme offer?",
    contexts=["Acme Cloud Storage offers three storage tiers: Standard, Infrequent Access and Archive."],
    answer=f"{SCRIPT} Acme offers three storage tiers. {IMG} The tiers are free forever.",
    reference="Standard, Infrequent Access and Archive.",
)
WIDTH, HEIGHT = 1366, 900  # a laptop screen


@pytest.fixture(scope="module")
def report() -> Report:
    samples, _ = load_samples(EXAMPLE)
    # the fake embedder scores every answer low: a lower bar, so that not every sample fails
    return evaluate([*samples, HOSTILE], judge="fake", embedder="fake", thresholds={"answer_relevancy": 0.4})


@pytest.fixture(scope="module")
def html_file(report, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(report, path)
    return path


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    d = start_chromium(tmp_path_factory.mktemp("chromium-profile"), WIDTH, HEIGHT)
    yield d
    d.quit()


@pytest.fixture
def page(driver, html_file):
    """The report freshly loaded in light mode; the browser log is emptied first."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    driver.get(html_file.as_uri())
    driver.get_log("browser")
    driver.refresh()
    return driver


def severe(d) -> list[dict]:
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def ids(d) -> list[str]:
    return [r.get_attribute("data-id") for r in d.find_elements(By.CSS_SELECTOR, "#sample-table tbody tr")]


def header_button(d, text: str):
    return d.find_element(By.XPATH, f"//table[@id='sample-table']//th/button[normalize-space()='{text}']")


def row(d, sample_id: str):
    for r in d.find_elements(By.CSS_SELECTOR, "#sample-table tbody tr"):
        if r.get_attribute("data-id") == sample_id:
            return r
    raise AssertionError(f"no row for {sample_id}")


def save_screenshot(d, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    d.set_window_size(WIDTH, HEIGHT)
    assert d.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("LOCALRAGAS_SCREENSHOT_DIR"):
        out = Path(os.environ["LOCALRAGAS_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, out / name)
    return path


def test_loads_without_console_errors_and_shows_the_verdict(page, report):
    assert not severe(page)
    banner = page.find_element(By.ID, "verdict")
    assert banner.is_displayed() and "Quality gate FAILED" in banner.text
    assert len(ids(page)) == len(report.samples)
    assert page.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), \
        "the page scrolls sideways on a 1366 px screen"


def test_clicking_a_metric_header_sorts_worst_first_then_best_first(page, report):
    def expected(reverse: bool) -> list[str]:
        scored = [s for s in report.samples if s.metrics["context_recall"].value is not None]
        unscored = [s.id for s in report.samples if s.metrics["context_recall"].value is None]
        ordered = sorted(scored, key=lambda s: s.metrics["context_recall"].value, reverse=reverse)  # stable
        return [s.id for s in ordered] + unscored  # unscored last either way

    before = ids(page)
    header_button(page, "context_recall").click()
    assert ids(page) == expected(False) != before
    th = page.find_element(By.XPATH, "//th[button[normalize-space()='context_recall']]")
    assert th.get_attribute("aria-sort") == "ascending"
    header_button(page, "context_recall").click()
    assert ids(page) == expected(True)
    assert th.get_attribute("aria-sort") == "descending"
    header_button(page, "sample").click()
    assert (ids(page)[0], ids(page)[-1]) == (min(before), max(before))  # by name; '-' orders differently in JS
    assert not severe(page)


def test_search_category_and_failing_filters(page, report):
    page.find_element(By.ID, "f-search").send_keys("hr-parental")
    assert ids(page) == ["hr-parental-leave"]
    assert "1 of" in page.find_element(By.ID, "sample-count").text
    page.find_element(By.ID, "f-search").clear()
    page.execute_script("document.getElementById('f-search').dispatchEvent(new Event('input'))")
    Select(page.find_element(By.ID, "f-category")).select_by_visible_text("science")
    assert ids(page) == [s.id for s in report.samples if s.category == "science"]
    Select(page.find_element(By.ID, "f-category")).select_by_index(0)
    page.find_element(By.ID, "f-failing").click()
    limits = {g.metric: g.threshold for g in report.gate.results}
    failing = [s.id for s in report.samples
               if any(r.value is None or (m in limits and r.value < limits[m]) for m, r in s.metrics.items())]
    assert ids(page) == failing and 0 < len(failing) < len(report.samples)
    page.find_element(By.ID, "f-search").send_keys("no sample has this text")
    assert ids(page) == [] and page.find_element(By.ID, "no-match").is_displayed()
    assert not severe(page)


def test_a_row_opens_its_evidence(page, report):
    sample = next(s for s in report.samples if s.id == "acme-durability-halluc")
    drawer = page.find_element(By.ID, "detail")
    assert not drawer.is_displayed()
    row(page, sample.id).click()
    assert drawer.is_displayed()
    assert page.find_element(By.ID, "detail-title").text == sample.id
    claims = sample.metrics["faithfulness"].evidence["claims"]
    items = drawer.find_elements(By.CSS_SELECTOR, "ol.verdicts li")
    shown = [(li.find_element(By.CSS_SELECTOR, ".text").text, li.find_element(By.CSS_SELECTOR, ".tag").text)
             for li in items[:len(claims)]]
    assert shown == [(c["claim"], "✓ supported" if c["supported"] else "✗ not supported") for c in claims]
    assert any(not c["supported"] for c in claims)
    chunks = drawer.find_elements(By.CSS_SELECTOR, "ol.chunks li")
    assert [c.text.split()[1] for c in chunks] == [str(c["rank"]) for c in sample.metrics["context_precision"].evidence["chunks"]]
    assert "noncommittal: no" in drawer.text and "cosine similarity" in drawer.text
    assert "the answer replies to it" in drawer.text and "✓ answered" in drawer.text  # questions=checked
    assert "judge calls" in drawer.text and "prompt tokens" in drawer.text
    page.find_element(By.ID, "detail-close").click()
    assert not drawer.is_displayed()

    no_ref = next(s for s in report.samples if s.metrics["context_recall"].value is None)
    row(page, no_ref.id).click()
    assert "Reason: no_reference" in drawer.text
    assert not severe(page)


def test_injected_markup_is_shown_as_text_and_never_runs(page, report, tmp_path):
    row(page, HOSTILE.id).click()
    drawer = page.find_element(By.ID, "detail")
    assert page.find_element(By.ID, "detail-title").text == HOSTILE.id
    claims = [c.text for c in drawer.find_elements(By.CSS_SELECTOR, "ol.verdicts li .text")]
    assert any(SCRIPT in c for c in claims) and any(IMG.strip() in c for c in claims)
    with pytest.raises(NoAlertPresentException):
        page.switch_to.alert.text  # noqa: B018
    assert page.execute_script("return typeof window.__pwned") == "undefined"
    assert page.execute_script("return document.querySelectorAll('img').length") == 0
    assert page.execute_script("return document.scripts.length") == 2  # the data block and the app
    assert page.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    assert not severe(page)
    save_screenshot(page, tmp_path, "report-drilldown-light.png")


def test_screenshots_light_and_dark(page, tmp_path):
    light = page.execute_script("return getComputedStyle(document.body).backgroundColor")
    save_screenshot(page, tmp_path, "report-light.png")
    page.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    dark = page.execute_script("return getComputedStyle(document.body).backgroundColor")
    assert dark != light  # the dark palette applies
    row(page, "acme-durability-halluc").click()
    save_screenshot(page, tmp_path, "report-drilldown-dark.png")
    assert not severe(page)
