"""The dashboard against `lens demo` (the small preset living 20 times as fast) in headless
Chromium: every page loads in light and dark with no console error and no failed request, and
is screenshotted into test-artifacts/dashboard/demo-*; the figures each page shows are the
API's answers to that page; sorting, filters, the heatmap, navigation and the URL state work on
the living cluster; the header says the cluster is simulated and how fast it lives."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.roles.api import browser
from tests.roles.demo.running import RunningDemo

pytestmark = pytest.mark.slow_timeout

# Fast enough for charts with history, slow enough to leave the other test worker a core.
SPEED = 20.0
NODE = "gpu-node-0000"
PAGES = {
    "overview": "",
    "nodes": "nodes",
    "heatmap": "nodes?view=heatmap",
    "node": f"nodes/{NODE}",
    "workloads": "workloads",
    "idle": "idle",
    "gpu-hours": "gpu-hours",
}

# Pages with no empty state once the cluster lives (the small one may have no idle GPU, a node
# no device change).
FILLED = ("overview", "nodes", "heatmap", "workloads", "gpu-hours")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDemo]:
    """The demo, run until the cluster has minutes behind it (20 s give 7), its first minutes
    are settled into utilization and the jobs have summed today's GPU-hours."""
    running = RunningDemo(tmp_path_factory.mktemp("demo"), speed=SPEED)
    try:
        began = time.monotonic()
        while not _filled(running) or time.monotonic() - began < 20:
            assert time.monotonic() - began < 120, "the demo did not fill its pages"
            time.sleep(1)
        yield running
    finally:
        running.stop()


def _filled(demo: RunningDemo) -> bool:
    overview = demo.answer("/v1/clusters/overview")
    about = demo.answer("/v1/about")
    assert isinstance(overview, dict) and isinstance(about, dict)
    today = time.strftime("%Y-%m-%d", time.gmtime(about["now"]))  # the cluster's day
    hours = demo.answer(f"/v1/gpuHours?start={today}&end={today}")
    assert isinstance(hours, dict)
    return overview["utilization"] is not None and hours["total"] > 0


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    yield from browser.opened(tmp_path_factory.mktemp("downloads"))


@pytest.fixture
def page(chrome: WebDriver) -> WebDriver:
    chrome.get("about:blank")
    browser.console_problems(chrome)
    browser.failed_requests(chrome)
    return chrome


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_page_loads_cleanly(demo: RunningDemo, page: WebDriver, theme: str) -> None:
    workload = _a_workload(demo)
    for name, route in {**PAGES, "workload": f"workloads/{workload}"}.items():
        joiner = "&" if "?" in route else "?"
        browser.show(page, f"{demo.url}#/{route}{joiner}theme={theme}")
        assert page.find_element(By.TAG_NAME, "html").get_attribute("data-theme") == theme
        assert not page.find_elements(By.CSS_SELECTOR, "[data-error]"), name
        if name in FILLED:
            assert not page.find_elements(By.CSS_SELECTOR, "[data-empty]"), name
        shot = browser.screenshot(page, f"demo-{name}-{theme}")
        assert shot.stat().st_size > 10_000, name
        assert browser.console_problems(page) == [], name
        assert browser.failed_requests(page) == [], name


def _a_workload(demo: RunningDemo) -> str:
    workloads = demo.answer("/v1/workloads?name=llama-pretrain")
    assert isinstance(workloads, dict)
    (found,) = workloads["data"]
    return str(found["uid"])


def test_the_header_says_the_cluster_is_simulated(demo: RunningDemo, page: WebDriver) -> None:
    """And how fast it lives now: 20 times real time, or less while the host cannot keep up
    (the rate /v1/about says, read as the page loads)."""
    rates = [_rate(demo)]
    browser.show(page, demo.url)
    badge = page.find_element(By.ID, "simulated")
    rates.append(_rate(demo))
    shown = {f"simulated cluster \u00b7 {rate:g}\u00d7 real time" for rate in rates}
    assert badge.is_displayed() and badge.text in shown
    assert all(1 <= rate <= SPEED for rate in rates)


def _rate(demo: RunningDemo) -> float:
    about = demo.answer("/v1/about")
    assert isinstance(about, dict)
    return float(about["clock_rate"])


def test_the_overview_shows_the_apis_answers(demo: RunningDemo, page: WebDriver) -> None:
    browser.show(page, demo.url)
    shown = browser.figures(page)
    answers = browser.answers(page)
    overview = answers["/v1/clusters/overview"]
    assert isinstance(overview, dict)
    for name in ("totalNodes", "healthyNodes", "faultyNodes", "totalGpus", "allocatedGpus"):
        value, text = shown[name]
        assert int(value) == overview[name] and text == f"{overview[name]:,}", name
    assert (overview["totalNodes"], overview["totalGpus"]) == (2, 16)
    for name in ("allocationRate", "utilization"):
        value, text = shown[name]
        assert overview[name] is not None and float(value) == overview[name], name
        assert text == f"{browser.one_decimal(overview[name])} %", name
    idle = answers["/v1/idle"]
    assert isinstance(idle, dict) and shown["idleGpus"][0] == str(idle["total"])
    history = answers["/v1/nodes/gpuUtilizationHistory"]
    assert isinstance(history, dict)
    # The charts end at the cluster's now, ahead of the browser's clock by now.
    assert len(page.find_elements(By.CSS_SELECTOR, "[data-chart] canvas")) >= 2


def test_a_nodes_gpus_show_the_apis_answer(demo: RunningDemo, page: WebDriver) -> None:
    browser.show(page, f"{demo.url}#/nodes/{NODE}")
    shown = browser.figures(page)
    gpus = browser.answers(page)["/v1/gpus"]
    assert isinstance(gpus, dict) and len(gpus["data"]) == 8
    for gpu in gpus["data"]:
        value, text = shown[f"gpu-{gpu['gpu_id']}-utilization"]
        assert float(value) == gpu["utilization_percent"]
        assert text == f"{browser.one_decimal(gpu['utilization_percent'])} %"
    held = [g for g in gpus["data"] if g["holder"] is not None]
    holders = browser.column(page, "gpus", 7)
    assert held and all(
        holders[g["gpu_id"]].startswith(f"{g['holder']['namespace']}/{g['holder']['pod_name']}")
        for g in held
    )


def test_sorting_filters_and_the_url_state(demo: RunningDemo, page: WebDriver) -> None:
    browser.show(page, f"{demo.url}#/workloads")
    page.find_element(By.CSS_SELECTOR, "th[data-sort='gpu_allocated']").click()
    WebDriverWait(page, 10).until(lambda d: "order_by=gpu_allocated" in d.current_url)
    browser.wait_ready(page)
    answered = browser.answers(page)["/v1/workloads"]
    assert isinstance(answered, dict)
    counts = [int(text.replace(",", "")) for text in browser.column(page, "workloads", 3)]
    assert counts == [w["gpu_allocated"] for w in answered["data"]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 8  # llama-pretrain
    kind = page.find_element(By.CSS_SELECTOR, "select[data-filter='kind']")
    kind.find_element(By.CSS_SELECTOR, "option[value='StatefulSet']").click()
    WebDriverWait(page, 10).until(lambda d: "kind=StatefulSet" in d.current_url)
    browser.wait_ready(page)
    assert browser.column(page, "workloads", 0) == ["rayworker"]
    shared = page.current_url
    page.get("about:blank")
    browser.show(page, shared)  # the same view from its URL alone
    assert browser.column(page, "workloads", 0) == ["rayworker"]
    assert "sorted-desc" in str(
        page.find_element(By.CSS_SELECTOR, "th[data-sort='gpu_allocated']").get_attribute("class")
    )


def test_from_the_heatmap_to_a_node_and_from_a_list_to_a_workload(
    demo: RunningDemo, page: WebDriver
) -> None:
    browser.show(page, f"{demo.url}#/nodes?view=heatmap")
    canvas = page.find_element(By.CSS_SELECTOR, "canvas[data-heatmap='utilization']")
    assert canvas.get_attribute("data-cells") == "16"
    ActionChains(page).move_to_element_with_offset(
        canvas, *browser.heatmap_cell(canvas, 0, 0)
    ).perform()
    tooltip = page.find_element(By.ID, "tooltip")
    WebDriverWait(page, 5).until(lambda _d: f"{NODE} · GPU 0" in tooltip.text)
    ActionChains(page).click().perform()
    WebDriverWait(page, 10).until(lambda d: d.current_url.endswith(f"#/nodes/{NODE}"))
    browser.wait_ready(page)
    assert page.find_element(By.TAG_NAME, "h1").text.startswith(NODE)
    browser.show(page, f"{demo.url}#/workloads")
    page.find_element(By.LINK_TEXT, "llama-pretrain").click()
    WebDriverWait(page, 10).until(lambda d: "#/workloads/" in d.current_url)
    browser.wait_ready(page)
    assert sorted(browser.column(page, "pods", 0)) == [
        "ml/llama-pretrain-master-0",
        "ml/llama-pretrain-worker-0",
    ]
    assert page.find_elements(By.CSS_SELECTOR, "[data-chart='GPU Utilization'] canvas")


def test_workload_statuses_read_as_kubernetes_tells_them(
    demo: RunningDemo, page: WebDriver
) -> None:
    """The small preset's truth (lens/sim/scenario/spec.py): bad-config, a Job whose pod fails
    150 s in, reads Failed with the Job controller's reason; the services and the training
    job run."""
    browser.show(page, f"{demo.url}#/workloads")
    statuses = dict(
        zip(
            browser.column(page, "workloads", 0),
            browser.column(page, "workloads", 5),
            strict=True,
        )
    )
    assert statuses["bad-config"] == "Failed: BackoffLimitExceeded"
    for running in ("llama-pretrain", "vllm-serve", "rayworker"):
        assert statuses[running] == "Running", running
    status = page.find_element(By.CSS_SELECTOR, "select[data-filter='status']")
    status.find_element(By.CSS_SELECTOR, "option[value='Failed']").click()
    WebDriverWait(page, 10).until(lambda d: "status=Failed" in d.current_url)
    browser.wait_ready(page)
    assert browser.column(page, "workloads", 0) == ["bad-config"]


def test_a_nodes_gpus_are_held_by_whom_the_simulator_says(
    demo: RunningDemo, page: WebDriver
) -> None:
    """Each GPU's holder on the node page, against who held it longest in the minute the page
    shows it as of (the truth the scenario enacted)."""
    browser.show(page, f"{demo.url}#/nodes/{NODE}")
    answered = browser.answers(page)["/v1/gpus"]
    assert isinstance(answered, dict)
    shown = browser.column(page, "gpus", 7)
    truth = demo.cluster.player.truth
    for gpu in answered["data"]:
        assert gpu["as_of"] is not None  # the demo has run for minutes: every GPU has read
        held = [
            (h.held_seconds(gpu["as_of"], gpu["as_of"] + 60), h)
            for h in truth.holds
            if h.node == NODE and gpu["gpu_id"] in h.gpus
        ]
        held = [(seconds, h) for seconds, h in held if seconds > 0]
        text = shown[gpu["gpu_id"]]
        if not held:
            assert text == "free", gpu["gpu_id"]
            continue
        _, longest = min(held, key=lambda sh: (-sh[0], sh[1].namespace, sh[1].pod_name))
        assert text.startswith(f"{longest.namespace}/{longest.pod_name}"), gpu["gpu_id"]
