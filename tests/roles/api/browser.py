"""Debian's headless Chromium driven by selenium through Debian's chromedriver, and what the
dashboard's tests read from it: console messages, failed requests, figures, screenshots."""

from __future__ import annotations

import base64
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from bench import chromium

# Screenshots a person can look at (ignored by git).
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "dashboard"


def opened(directory: Path, *, timezone: str | None = None) -> Iterator[WebDriver]:
    """Chromium keeping its console and network logs, downloading into `directory`, in
    `timezone` (default: the test process's)."""
    try:
        driver = chromium.start(downloads=directory, logs=True, timezone=timezone)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield driver
    finally:
        driver.quit()


def show(driver: WebDriver, url: str) -> None:
    """Go to `url` and wait until the page says it is drawn (body[data-state] ready)."""
    driver.get(url)
    wait_ready(driver)


# The page drew the view its URL names (a click changes the URL a moment before the page
# starts drawing: until then body[data-state] still tells of the view before).
DRAWN = (
    "return document.body.dataset.state !== 'loading'"
    " && document.body.dataset.drawn === (location.hash || '#/')"
)


def wait_ready(driver: WebDriver) -> None:
    WebDriverWait(driver, 20).until(lambda d: d.execute_script(DRAWN))
    state = driver.find_element(By.TAG_NAME, "body").get_attribute("data-state")
    assert state == "ready", driver.find_element(By.ID, "main").text


def console_problems(driver: WebDriver) -> list[str]:
    """Console warnings and errors since the last call."""
    return [
        entry["message"]
        for entry in driver.get_log("browser")
        if entry["level"] in ("SEVERE", "WARNING")
    ]


def failed_requests(driver: WebDriver) -> list[str]:
    """Requests answered 400 or more, or that failed, since the last call."""
    failed = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.responseReceived":
            response = params["response"]
            if response["status"] >= 400:
                failed.append(f"{response['status']} {response['url']}")
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f"failed {params.get('errorText')} ({params.get('requestId')})")
    return failed


def answers(driver: WebDriver) -> dict[str, object]:
    """The /v1 answers the page received since the logs were last read, the latest by path:
    each as the page parsed it (the envelope's `data`). What a live cluster shows is checked
    against these, not against a later request that the cluster may answer otherwise."""
    found: dict[str, object] = {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] != "Network.responseReceived":
            continue
        response = message["params"]["response"]
        path = urlsplit(response["url"]).path
        if not path.startswith("/v1/") or response["status"] != 200:
            continue
        body = driver.execute_cdp_cmd(  # type: ignore[no-untyped-call]  # untyped in selenium
            "Network.getResponseBody", {"requestId": message["params"]["requestId"]}
        )
        text = base64.b64decode(body["body"]) if body["base64Encoded"] else body["body"]
        parsed = json.loads(text)
        found[path] = parsed["data"] if isinstance(parsed, dict) and "meta" in parsed else parsed
    return found


def one_decimal(value: float) -> str:
    """`value` as the dashboard writes a percent's figure (toLocaleString, one decimal): the
    shortest decimal that is the double (36.55, not 36.54999...), half rounded up — not
    Python's format, which rounds the exact double (36.5)."""
    return str(decimal.Decimal(repr(value)).quantize(decimal.Decimal("0.1"), decimal.ROUND_HALF_UP))


def figures(driver: WebDriver) -> dict[str, tuple[str, str]]:
    """Every [data-figure] shown: its raw value and its text, by name. A page refreshing
    itself may replace its figures between finding them and reading them (a stale element):
    then they are found again, as the page stands after its refresh."""
    for _ in range(4):
        try:
            return {
                str(element.get_attribute("data-figure")): (
                    str(element.get_attribute("data-value")),
                    element.text,
                )
                for element in driver.find_elements(By.CSS_SELECTOR, "[data-figure]")
            }
        except StaleElementReferenceException:
            continue
    raise AssertionError("the page replaced its figures four times while they were read")


def column(driver: WebDriver, table: str, index: int) -> list[str]:
    """The texts of one column of a table the page names [data-table=<table>]."""
    cells = driver.find_elements(
        By.CSS_SELECTOR, f"table[data-table='{table}'] tbody tr td:nth-child({index + 1})"
    )
    return [cell.text for cell in cells]


def heatmap_cell(canvas: WebElement, node_index: int, gpu: int) -> tuple[int, int]:
    """The offset from the heatmap canvas's centre (what selenium moves to) of the middle of
    GPU `gpu` of the `node_index`th node block, as heatmap.js lays them out."""
    cell = int(str(canvas.get_attribute("data-cell-px")))
    label = int(str(canvas.get_attribute("data-label-px")))
    per_row = int(str(canvas.get_attribute("data-per-row")))
    width, height = canvas.size["width"], canvas.size["height"]
    block = (width // per_row) if per_row else width
    row, column = divmod(node_index, per_row)
    x = column * block + gpu * cell + cell // 2
    y = row * (label + cell + HEATMAP_GAP) + label + cell // 2
    return x - width // 2, y - height // 2


# heatmap.js's pixels between node blocks.
HEATMAP_GAP = 6


def screenshot(driver: WebDriver, name: str) -> Path:
    """The whole page as a PNG under test-artifacts/dashboard/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(chromium.WIDTH, max(chromium.HEIGHT, min(int(height) + 40, 6000)))
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(chromium.WIDTH, chromium.HEIGHT)
    return path
