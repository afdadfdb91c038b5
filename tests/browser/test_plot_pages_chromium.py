"""`compare --html` and `calibrate --html` in real headless Chromium at 1,366 x 900: styled as the HTML report, their
charts as wide as the page's column (a pair side by side: half of it) and every text in them shown at 12 px or more.

Needs the Debian packages chromium and chromium-driver and the pip package selenium; skips (never fails) without them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chromium import NEEDS_CHROMIUM, start_chromium

pytestmark = NEEDS_CHROMIUM
try:
    from selenium.webdriver.common.by import By
except ImportError as exc:  # missing or broken: skip, never fail
    pytest.skip(f"selenium unavailable ({exc}): pip install selenium", allow_module_level=True)

from cli_helpers import cli  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]

# each text's size as shown: its computed font size times its drawing's scale (shown width / viewBox width)
TEXT_SIZES = """
return [...document.querySelectorAll('svg.plot')].flatMap(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
});
"""
WIDTHS = """
const main = document.querySelector('main');
const cs = getComputedStyle(main);
const column = main.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
return [column, ...[...document.querySelectorAll('svg.plot')].map(s => s.getBoundingClientRect().width)];
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    d = start_chromium(tmp_path_factory.mktemp("chromium-profile"), 1366, 900)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    base, new = folder / "base.json", folder / "new.json"
    for out, extra in ((base, []), (new, ["--metric-option", "faithfulness.statements=claims"])):
        assert cli("eval", EXAMPLE, *FAST, "--no-gate", "--no-history", *extra, "--out", out).exit_code in (0, 1)
    compared = folder / "compare.html"
    assert cli("compare", base, new, "--html", compared).exit_code == 0
    labelled = folder / "labelled.jsonl"
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    labelled.write_text("".join(json.dumps({**row, "label": {"metric": "faithfulness", "kind": "binary",
                                                              "value": i % 2}}) + "\n"
                                for i, row in enumerate(rows)), encoding="utf-8")
    calibrated = folder / "calibrate.html"
    r = cli("calibrate", labelled, *FAST, "--html", calibrated, "--out", folder / "calibrate.json")
    assert r.exit_code == 0, r.output
    return {"compare": compared, "calibrate": calibrated}


@pytest.mark.parametrize("which", ["compare", "calibrate"])
def test_charts_fill_the_column_and_their_text_is_12_px_or_more(driver, pages, which):
    driver.get(pages[which].as_uri())
    assert driver.find_element(By.CSS_SELECTOR, "header.top h1").is_displayed()
    sizes = driver.execute_script(TEXT_SIZES)
    assert sizes and min(sizes) >= 12, sorted(sizes)[:5]
    column, *charts = driver.execute_script(WIDTHS)
    assert charts
    if which == "compare":
        assert all(w >= 0.95 * column for w in charts), (column, charts)  # the page's width
    else:
        assert all(0.45 * column <= w <= 0.5 * column for w in charts), (column, charts)  # two a row
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 1366
