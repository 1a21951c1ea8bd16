"""The dashboard against `lens demo`'s medium preset — 100 nodes, 800 GPUs, about 500 pods of
five teams — at the speed it sustains on 2 cores (3 times real time), read as a person reads
it: every page loads with no console error and no failed request, the cluster's size and its
GPUs are the scenario's, every GPU has a cell on the heatmap and a reading on its node's page,
no source is called missing or stale, GPU-hours per team name the scenario's teams, and the
scenario's failing and throttling GPUs read as such on their nodes' pages."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from lens.roles.demo.main import SUSTAINED_SPEEDS
from tests.roles.api import browser
from tests.roles.demo.running import RunningDemo

SPEED = float(SUSTAINED_SPEEDS["medium"])


def _gpus_read(demo: RunningDemo) -> int:
    gpus = demo.answer("/v1/gpus?page_size=1000")
    assert isinstance(gpus, dict)
    rows: list[dict[str, Any]] = gpus["data"]
    return sum(1 for g in rows if g["as_of"] is not None)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDemo]:
    """The medium demo, run until every GPU has a reading and today's GPU-hours are summed."""
    running = RunningDemo(tmp_path_factory.mktemp("medium"), preset="medium", speed=SPEED)
    try:
        began = time.monotonic()
        while _gpus_read(running) < 800 or not _summed(running) or not _judged(running):
            assert time.monotonic() - began < 300, "the medium demo did not fill its pages"
            time.sleep(2)
        yield running
    finally:
        running.stop()


EXPECTED_HEALTH = {
    "uncorrectable_error": "unhealthy ecc uncorrectable",
    "thermal_throttle": "degraded throttle thermal",
}


def _judged(demo: RunningDemo) -> bool:
    """Every faulty GPU of the scenario judged so by its agent, as the API serves it."""
    for fault in demo.cluster.player.scenario.gpu_faults:
        devices = demo.answer(f"/v1/nodes/{fault.node}/gpuDevices")
        assert isinstance(devices, list)
        health = {d["deviceId"]: d["health"] for d in devices}
        if str(health.get(fault.gpu) or "healthy").startswith("healthy"):
            return False
    return True


def _summed(demo: RunningDemo) -> bool:
    about = demo.answer("/v1/about")
    assert isinstance(about, dict)
    today = time.strftime("%Y-%m-%d", time.gmtime(about["now"]))
    hours = demo.answer(f"/v1/gpuHours?start={today}&end={today}&group_by=label:team")
    assert isinstance(hours, dict)
    return int(hours["total"]) > 0


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    yield from browser.opened(tmp_path_factory.mktemp("downloads"))


@pytest.mark.timeout(420)
def test_the_medium_cluster_reads_as_the_scenario_enacted(
    demo: RunningDemo, page: WebDriver
) -> None:
    scenario = demo.cluster.player.scenario
    browser.show(page, demo.url)
    shown = browser.figures(page)
    assert (shown["totalNodes"][1], shown["totalGpus"][1]) == ("100", "800")
    assert not page.find_elements(By.CSS_SELECTOR, "#sources [data-source]")  # all reporting
    browser.show(page, f"{demo.url}#/nodes?view=heatmap")
    canvas = page.find_element(By.CSS_SELECTOR, "canvas[data-heatmap='utilization']")
    assert canvas.get_attribute("data-cells") == "800"
    node = scenario.node_names[57]
    browser.show(page, f"{demo.url}#/nodes/{node}")
    holders = browser.column(page, "gpus", 7)
    assert len(holders) == 8 and "no reading yet" not in holders
    for fault in scenario.gpu_faults:
        browser.show(page, f"{demo.url}#/nodes/{fault.node}")
        health = browser.column(page, "gpus", 8)
        assert health[fault.gpu] == EXPECTED_HEALTH[fault.kind], fault
        assert {h for i, h in enumerate(health) if i != fault.gpu} == {"healthy"}, fault
    browser.show(page, f"{demo.url}#/gpu-hours?group_by=label:team&days=today")
    teams = browser.column(page, "gpu-hours", 0)
    assert set(teams) == {team for _, team in scenario.teams}  # no "(none)": every pod's team
    held = [
        float(str(cell.get_attribute("data-value")))
        for cell in page.find_elements(By.CSS_SELECTOR, "[data-figure='held']")
    ]
    assert all(hours > 0 for hours in held)
    browser.show(page, f"{demo.url}#/workloads")
    assert browser.column(page, "workloads", 0)  # the first page of its workloads
    assert browser.console_problems(page) == []
    assert browser.failed_requests(page) == []
    browser.screenshot(page, "demo-medium-workloads")
