"""Debian's headless Chromium through Debian's chromedriver (selenium): the browser the
dashboard's benchmark and tests drive (scripts/services installs both)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1400, 1000


def start(
    *, downloads: Path | None = None, logs: bool = False, timezone: str | None = None
) -> WebDriver:
    """A new headless Chromium with an empty profile (nothing cached); `logs`: its console
    and network events kept for get_log("browser") and get_log("performance"); `timezone`:
    the viewer's (an IANA name; default: this process's)."""
    for program in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(program) is None:
            raise RuntimeError(
                f"{program} is missing: scripts/services installs chromium and chromium-driver"
            )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in CI
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WIDTH},{HEIGHT}",
        "--hide-scrollbars",
    ):
        options.add_argument(argument)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    if downloads is not None:
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(downloads), "download.prompt_for_download": False},
        )
    env = {**os.environ, "TZ": timezone} if timezone else None
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER, env=env))
