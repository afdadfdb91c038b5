"""Screenshot an HTML report in headless Chromium (Debian chromium + chromium-driver, pip selenium).

    .venv/bin/python -m research.screenshot_report report.html docs/html-report.png [--open SAMPLE_ID] [--dark]

The whole page is captured at 1366 px wide (a laptop screen); --open clicks a sample row first to show its evidence.
"""
from __future__ import annotations

import argparse
import base64
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

WIDTH = 1366


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("html", type=Path)
    p.add_argument("png", type=Path)
    p.add_argument("--open", metavar="SAMPLE_ID", help="open this sample's evidence panel first")
    p.add_argument("--dark", action="store_true", help="dark colour scheme")
    p.add_argument("--height", type=int, default=0, help="crop to this height (default: the whole page)")
    args = p.parse_args()
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile:
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--hide-scrollbars", f"--window-size={WIDTH},900",
                     f"--user-data-dir={profile}"):
            opts.add_argument(flag)
        d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        try:
            scheme = "dark" if args.dark else "light"
            d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            d.get(args.html.resolve().as_uri())
            if args.open:
                rows = [r for r in d.find_elements(By.CSS_SELECTOR, "#sample-table tbody tr")
                        if r.get_attribute("data-id") == args.open]
                if not rows:
                    raise SystemExit(f"no sample row {args.open!r}")
                d.execute_script("arguments[0].scrollIntoView({block: 'center'})", rows[0])
                rows[0].click()
            if args.open:  # the evidence panel is fixed to the viewport: capture what is on screen
                png = d.get_screenshot_as_png()
            else:
                height = args.height or d.execute_script("return document.documentElement.scrollHeight")
                shot = d.execute_cdp_cmd("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}})
                png = base64.b64decode(shot["data"])
        finally:
            d.quit()
    args.png.parent.mkdir(parents=True, exist_ok=True)
    args.png.write_bytes(png)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
