"""Headless Chromium for the browser tier, as every browser test starts it: where the browser and its driver are, the
marks that skip a test module when either is missing, and a driver with the flags that keep it offline and quiet."""
from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
NEEDS_CHROMIUM = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} missing: apt-get install chromium"),
    pytest.mark.skipif(not CHROMEDRIVER.exists(), reason=f"{CHROMEDRIVER} missing: apt-get install chromium-driver"),
]


def start_chromium(profile: Path, width: int, height: int, logs: tuple[str, ...] = ("browser",)):
    """A headless Chromium driver with its own profile folder, no background networking, the window size given and
    the logs named ("browser", "performance") kept at every level. The caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--hide-scrollbars", f"--window-size={width},{height}",
                 f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {log: "ALL" for log in logs})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
