"""What a person reads on the dashboard, against the truth dashboardrows.py wrote (not only the
API's answers): each card and cell, the "as of" beside them in the viewer's time zone (a zone
not UTC's, to prove it), stale figures marked, holders never guessed, changes said in words,
charts spanning the range picked with 24-hour labels that do not overlap, training charts
titled with their units, and a page loading or failing saying so."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from lens.store import database, freshness
from tests.roles.api import browser
from tests.roles.api.conftest import CLUSTER
from tests.roles.api.dashboardrows import (
    MINUTE,
    true_used_of_held,
    true_utilization,
)
from tests.roles.api.test_dashboard import Served, _served
from tests.roles.api.usagerows import at

pytestmark = pytest.mark.slow_timeout

# The viewer's zone: 45 minutes off any whole-hour zone, so a time written in UTC or the
# server's zone would not pass for it.
ZONE = "Australia/Eucla"
OFFSET = 8.75 * 3600


def clock(seconds: float) -> str:
    """HH:MM in ZONE (it keeps no daylight saving time)."""
    return time.strftime("%H:%M", time.gmtime(seconds + OFFSET))


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, float]]:
    began = time.time()
    for served in _served(tmp_path_factory.mktemp("figures"), seeded=True):
        yield served, began


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    yield from browser.opened(tmp_path_factory.mktemp("downloads"), timezone=ZONE)


@pytest.fixture
def page(chrome: WebDriver) -> WebDriver:
    chrome.get("about:blank")
    browser.console_problems(chrome)
    browser.failed_requests(chrome)
    return chrome


def _as_of(page: WebDriver, name: str) -> tuple[float | None, str]:
    found = page.find_element(By.CSS_SELECTOR, f"[data-as-of='{name}']")
    value = str(found.get_attribute("data-value"))
    return (None if value == "null" else float(value)), found.text


def _text(page: WebDriver, figure: str) -> str:
    return browser.figures(page)[figure][1]


def test_the_overview_reads_the_truth_and_when_it_was_measured(
    seeded: tuple[Served, float], page: WebDriver
) -> None:
    served, began = seeded
    browser.show(page, served.url)
    # dashboardrows.py: 6 nodes, gpu-f NotReady; 19 of 48 GPUs held by four pods.
    shown = {name: _text(page, name) for name in ("totalNodes", "healthyNodes", "faultyNodes")}
    assert shown == {"totalNodes": "6", "healthyNodes": "5", "faultyNodes": "1"}
    assert (_text(page, "totalGpus"), _text(page, "allocatedGpus")) == ("48", "19")
    assert _text(page, "allocationRate") == "39.6 %"
    # The nodes' figures as of the node info (when the rows were written), said once.
    nodes_at, nodes_text = _as_of(page, "overview")
    assert nodes_at is not None and began - 1 <= nodes_at <= time.time()
    assert nodes_text == f"as of {clock(nodes_at)}"
    # Utilization: the latest complete minute, on its own card as its time differs; its figure
    # the truth of that minute.
    minute, minute_text = _as_of(page, "utilization")
    assert minute is not None and minute % MINUTE == 0
    assert began - 4 * MINUTE <= minute <= time.time() - 2 * MINUTE
    assert minute_text == f"as of {clock(minute)}"
    assert _text(page, "utilization") == f"{browser.one_decimal(true_utilization(minute))} %"
    assert _text(page, "idleGpus") == "1"  # p3's GPU, at 0 % all along
    assert not page.find_elements(By.CSS_SELECTOR, ".card.stale")
    footer = page.find_element(By.ID, "zone").text
    assert footer == "Times are Australia/Eucla, UTC+08:45, on a 24-hour clock."


def test_the_nodes_table_and_a_nodes_page_agree_with_the_truth(
    seeded: tuple[Served, float], page: WebDriver
) -> None:
    served, _ = seeded
    browser.show(page, f"{served.url}#/nodes")
    minute, text = _as_of(page, "utilization")
    assert minute is not None and text == f"as of {clock(minute)}"
    busy = dict(
        zip(browser.column(page, "nodes", 0), browser.column(page, "nodes", 5), strict=True)
    )
    for name in ("gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e"):
        assert busy[name] == f"{browser.one_decimal(true_utilization(minute, (name,)))} %", name
    assert busy["gpu-f"] == "—"  # its agent stopped: unknown, not 0
    browser.show(page, f"{served.url}#/nodes/gpu-a")
    facts = page.find_element(By.CSS_SELECTOR, ".facts").text
    # The node's capacity, 2113459300Ki, in GiB; its CPUs counted and named.
    assert "2,015.6 GiB" in facts and "192 CPUs · AMD EPYC 9654" in facts
    assert "8 GPUs · AMD Instinct MI300X" in facts
    latest, gpus_text = _as_of(page, "gpus")
    assert latest is not None and gpus_text == f"as of {clock(latest)}"
    # The 8 GPUs appeared at once: one change, in words.
    changes = browser.column(page, "changelog", 2)
    assert changes == ["8 GPUs MI300X appeared"]
    # Each GPU's health as its agent judged it, in words.
    health = browser.column(page, "gpus", 8)
    assert health == [
        {3: "unhealthy ecc uncorrectable", 5: "degraded throttle thermal"}.get(i, "healthy")
        for i in range(8)
    ]
    browser.show(page, f"{served.url}#/nodes/gpu-f")
    # No reading of gpu-f's GPUs: who holds them is not known, never "free".
    assert set(browser.column(page, "gpus", 7)) == {"no reading yet"}
    assert set(browser.column(page, "gpus", 8)) == {"healthy"}
    browser.show(page, f"{served.url}#/nodes/gpu-e")
    assert set(browser.column(page, "gpus", 7)) == {"free"}


def _chart(page: WebDriver, name: str) -> dict[str, object]:
    panel = page.find_element(By.CSS_SELECTOR, f"[data-chart='{name}']")
    WebDriverWait(page, 5).until(lambda _d: panel.get_attribute("data-x-min"))
    return {
        "min": float(str(panel.get_attribute("data-x-min"))),
        "max": float(str(panel.get_attribute("data-x-max"))),
        "labels": json.loads(str(panel.get_attribute("data-x-labels"))),
        "width": float(str(panel.get_attribute("data-plot-width"))),
    }


@pytest.mark.parametrize(("range_name", "seconds"), [("1h", 3600), ("24h", 86400)])
def test_charts_span_the_range_picked_in_24_hour_time(
    seeded: tuple[Served, float], page: WebDriver, range_name: str, seconds: int
) -> None:
    served, _ = seeded
    browser.show(page, f"{served.url}#/?range={range_name}")
    shown = time.time()
    drawn = _chart(page, "utilization")
    # The axis is the range asked, ending now, not the data's 90 minutes.
    assert drawn["max"] - drawn["min"] == seconds  # type: ignore[operator]
    assert abs(float(drawn["max"]) - shown) < 30  # type: ignore[arg-type]
    labels = drawn["labels"]
    assert isinstance(labels, list) and len(labels) >= 2
    for label in labels:
        assert re.fullmatch(r"\d\d:\d\d(\n\d\d-\d\d)?", label), label  # no am/pm
    # Room for every label: at least 90 px each (a label is at most ~45 px wide).
    assert len(labels) <= float(drawn["width"]) / 90 + 1  # type: ignore[arg-type]


def test_gpu_hours_bars_are_used_of_held(seeded: tuple[Served, float], page: WebDriver) -> None:
    served, began = seeded
    browser.show(page, f"{served.url}#/gpu-hours")
    namespaces = browser.column(page, "gpu-hours", 0)
    shares = [
        float(str(bar.get_attribute("data-used-of-held")))
        for bar in page.find_elements(By.CSS_SELECTOR, "[data-used-of-held]")
    ]
    for namespace, share in zip(namespaces, shares, strict=True):
        assert share == pytest.approx(true_used_of_held(namespace, began), abs=1e-6), namespace
    written = browser.column(page, "gpu-hours", 4)
    assert [w.split()[-2:] for w in written] == [[str(round(100 * s)), "%"] for s in shares]
    assert browser.column(page, "gpu-hours", 5) == ["all", "all", "all"]  # every minute read
    summed, text = _as_of(page, "gpu-hours")
    assert summed is not None and text == f"as of {clock(summed)}"


def test_training_charts_are_titled_with_their_units(
    seeded: tuple[Served, float], page: WebDriver
) -> None:
    served, _ = seeded
    browser.show(page, f"{served.url}#/workloads/w1?range=1h")
    titles = [
        element.text
        for element in page.find_elements(By.CSS_SELECTOR, "[data-chart^='training-'] h3")
    ]
    assert titles == ["Loss", "TFLOP/s per GPU", "Iteration time (s)"]


def test_stale_figures_are_marked(tmp_path: Path, page: WebDriver) -> None:
    for served in _served(tmp_path, seeded=True):
        ran = time.time() - 600  # the node info's last run, ten minutes ago: it stopped
        freshness.record(
            served.db, cluster=CLUSTER, figure=freshness.NODES, as_of=at(ran), interval_seconds=30
        )
        browser.show(page, served.url)
        _, text = _as_of(page, "overview")
        assert text == f"stale · as of {clock(ran)}"
        stale = {
            str(card.get_attribute("data-card"))
            for card in page.find_elements(By.CSS_SELECTOR, ".card.stale")
        }
        assert {"totalNodes", "healthyNodes", "faultyNodes", "totalGpus"} <= stale
        assert "allocatedGpus" not in stale  # the controller's figures are current
        banner = page.find_element(By.CSS_SELECTOR, "#sources [data-source='node_info']").text
        assert banner.startswith("The jobs' node info (lens jobs) last reported at ")


def test_a_page_loading_says_so_and_keeps_its_tab(
    seeded: tuple[Served, float], page: WebDriver
) -> None:
    served, _ = seeded
    browser.show(page, served.url)
    page.execute_cdp_cmd(  # type: ignore[no-untyped-call]  # untyped in selenium
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 1500, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    try:
        page.find_element(By.CSS_SELECTOR, "#nav a[data-page='nodes']").click()
        loading = page.find_element(By.ID, "loading")
        WebDriverWait(page, 5).until(lambda _d: loading.is_displayed())
        assert loading.text == "loading Nodes…"
        active = page.find_element(By.CSS_SELECTOR, "#nav a.active").text
        assert active == "Overview"  # the page shown is still the overview's
        assert "busy" in str(page.find_element(By.ID, "main").get_attribute("class"))
        browser.wait_ready(page)
        assert page.find_element(By.CSS_SELECTOR, "#nav a.active").text == "Nodes"
        assert not loading.is_displayed()
    finally:
        page.execute_cdp_cmd(  # type: ignore[no-untyped-call]  # untyped in selenium
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )


def test_a_page_that_fails_says_what_failed(tmp_path: Path, page: WebDriver) -> None:
    for served in _served(tmp_path, seeded=True):
        with database.session(served.db):
            database.execute(served.db, "DROP TABLE gpu_idle_intervals")
        page.get(served.url)
        WebDriverWait(page, 20).until(lambda d: d.execute_script(browser.DRAWN))
        failed = page.find_element(By.CSS_SELECTOR, "[data-error]")
        assert failed.text.startswith("The API answered 503 to /v1/idle: ")
        assert page.find_element(By.CSS_SELECTOR, "[data-error] button").text == "Try again"
