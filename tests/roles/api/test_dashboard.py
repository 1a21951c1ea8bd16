"""The dashboard at / in headless Chromium, on a small living cluster (dashboardrows.py): every
page loads, in light and dark, with no console error and no failed request; the figures shown
are the API's; sorting, filters, the heatmap and the URL state work. Screenshots of every page
land in test-artifacts/dashboard/ for a person to look at."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import peewee
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from lens.roles.api import auth, dashboard
from lens.roles.api.serving import ApiServer, ServerLimits
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating
from tests.roles.api import browser
from tests.roles.api.conftest import make_app
from tests.roles.api.dashboardrows import TRAINING, agents_only, living_cluster

pytestmark = pytest.mark.slow_timeout

PAGES = {
    "overview": "",
    "nodes": "nodes",
    "heatmap": "nodes?view=heatmap",
    "node": "nodes/gpu-a",
    "workloads": "workloads",
    "workload": "workloads/w1",
    "idle": "idle",
    "gpu-hours": "gpu-hours",
}


class Served:
    """The API on a database, at `url`, with the client's view of it (`answer`)."""

    def __init__(
        self,
        db: peewee.Database,
        tokens: auth.Authenticator | None = None,
        max_page_size: int = 1000,
    ) -> None:
        self.db = db
        app = make_app(db, tokens=tokens, max_page_size=max_page_size, team_label="team")
        self.server = ApiServer(
            app, host="127.0.0.1", port=0, limits=ServerLimits(), on_failure=print
        )
        asyncio.run(self.server.start())
        self.url = f"http://127.0.0.1:{self.server.port}/"

    def answer(self, path: str) -> object:
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as response:
            body = json.loads(response.read())
        return body["data"]

    def csv(self, path: str) -> str:
        asked = urllib.request.Request(self.url + path.lstrip("/"), headers={"Accept": "text/csv"})
        with urllib.request.urlopen(asked, timeout=10) as response:
            return str(response.read().decode())

    def stop(self) -> None:
        asyncio.run(self.server.stop())


def _served(
    directory: Path,
    *,
    seeded: bool,
    tokens: auth.Authenticator | None = None,
    max_page_size: int = 1000,
) -> Iterator[Served]:
    db = database.open_database(DatabaseConfig(url=f"sqlite:///{directory / 'dash.db'}"))
    migrating.migrate(db)
    if seeded:
        living_cluster(db, time.time())
    served = Served(db, tokens, max_page_size)
    try:
        yield served
    finally:
        served.stop()
        database.close_all(db)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _served(tmp_path_factory.mktemp("dash"), seeded=True)


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def chrome(downloads: Path) -> Iterator[WebDriver]:
    yield from browser.opened(downloads)


@pytest.fixture
def page(chrome: WebDriver) -> WebDriver:
    """The browser on a blank page (an earlier test's page and its timers gone), its logs
    emptied of what earlier tests left."""
    chrome.get("about:blank")
    browser.console_problems(chrome)
    browser.failed_requests(chrome)
    return chrome


def test_the_page_is_served_with_a_policy_allowing_only_this_server(api: Served) -> None:
    with urllib.request.urlopen(api.url, timeout=10) as response:
        policy = response.headers["Content-Security-Policy"]
        html = response.read().decode()
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "//" not in "".join(part.split('"')[0] for part in html.split('src="')[1:])
    assert dashboard.is_open("/") and not dashboard.is_open("/v1/nodes")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_page_loads_cleanly(api: Served, page: WebDriver, theme: str) -> None:
    for name, route in PAGES.items():
        joiner = "&" if "?" in route else "?"
        browser.show(page, f"{api.url}#/{route}{joiner}theme={theme}")
        assert page.find_element(By.TAG_NAME, "html").get_attribute("data-theme") == theme
        assert not page.find_elements(By.CSS_SELECTOR, "[data-error]"), name
        shot = browser.screenshot(page, f"{name}-{theme}")
        assert shot.stat().st_size > 10_000, name
        assert browser.console_problems(page) == [], name
        assert browser.failed_requests(page) == [], name


def test_the_overview_shows_the_apis_figures(api: Served, page: WebDriver) -> None:
    browser.show(page, api.url)
    shown = browser.figures(page)
    # What the page was answered: a later request may fall in the next minute.
    answered = browser.answers(page)
    overview = answered["/v1/clusters/overview"]
    assert isinstance(overview, dict)
    for name in (
        "totalNodes",
        "healthyNodes",
        "faultyNodes",
        "totalGpus",
        "allocatedGpus",
        "busyNodes",
        "partiallyIdleNodes",
        "fullyIdleNodes",
    ):
        value, text = shown[name]
        assert int(value) == overview[name] and text == f"{overview[name]:,}", name
    for name in ("allocationRate", "utilization"):
        value, text = shown[name]
        assert overview[name] is not None and float(value) == overview[name], name
        assert text == f"{browser.one_decimal(overview[name])} %", name
    idle = answered["/v1/idle"]
    assert isinstance(idle, dict) and shown["idleGpus"][0] == str(idle["total"]) == "1"
    # The truth dashboardrows.py wrote: 6 nodes, one NotReady, 19 of 48 GPUs held.
    assert (overview["totalNodes"], overview["faultyNodes"], overview["allocatedGpus"]) == (
        6,
        1,
        19,
    )
    assert len(page.find_elements(By.CSS_SELECTOR, "[data-chart] canvas")) >= 2


def test_a_nodes_gpus_show_their_latest_minute(api: Served, page: WebDriver) -> None:
    browser.show(page, f"{api.url}#/nodes/gpu-a")
    gpus = api.answer("/v1/gpus?node=gpu-a&order_by=node")
    assert isinstance(gpus, dict)
    shown = browser.figures(page)
    for gpu in gpus["data"]:
        value, text = shown[f"gpu-{gpu['gpu_id']}-utilization"]
        assert float(value) == gpu["utilization_percent"]
        assert text == f"{browser.one_decimal(gpu['utilization_percent'])} %"
    assert browser.column(page, "gpus", 7)[0].startswith("ml/pod-p1")
    assert browser.column(page, "workloads-now", 0) == ["train"]


def test_sorting_and_filters_live_in_the_url(api: Served, page: WebDriver) -> None:
    browser.show(page, f"{api.url}#/nodes")
    assert browser.column(page, "nodes", 0) == [
        "gpu-a",
        "gpu-b",
        "gpu-c",
        "gpu-d",
        "gpu-e",
        "gpu-f",
    ]
    page.find_element(By.CSS_SELECTOR, "th[data-sort='gpu_allocation']").click()
    WebDriverWait(page, 10).until(lambda d: "order_by=gpu_allocation" in d.current_url)
    browser.wait_ready(page)
    allocated = [int(text) for text in browser.column(page, "nodes", 4)]
    assert allocated == sorted(allocated, reverse=True) == [8, 8, 2, 1, 0, 0]
    status = page.find_element(By.CSS_SELECTOR, "select[data-filter='status']")
    status.find_element(By.CSS_SELECTOR, "option[value='NotReady']").click()
    WebDriverWait(page, 10).until(lambda d: "status=NotReady" in d.current_url)
    browser.wait_ready(page)
    assert browser.column(page, "nodes", 0) == ["gpu-f"]
    shared = page.current_url
    page.get("about:blank")
    browser.show(page, shared)  # the same view from its URL alone
    assert browser.column(page, "nodes", 0) == ["gpu-f"]
    assert (
        page.find_element(By.CSS_SELECTOR, "th[data-sort='gpu_allocation']").get_attribute("class")
        == "num sortable sorted-desc"
    )


def test_the_heatmap_names_each_gpu_and_its_pod(api: Served, page: WebDriver) -> None:
    browser.show(page, f"{api.url}#/nodes?view=heatmap")
    canvas = page.find_element(By.CSS_SELECTOR, "canvas[data-heatmap='utilization']")
    assert canvas.get_attribute("data-cells") == "48"
    # Six nodes: large cells with each node's name above its block, not a strip.
    assert int(str(canvas.get_attribute("data-cell-px"))) >= 24
    assert int(str(canvas.get_attribute("data-label-px"))) > 0
    # The truth dashboardrows.py wrote: 19 GPUs held; gpu-f's 8 unread; the 21 others free
    # (drawn hollow, whatever their 0 %).
    assert canvas.get_attribute("data-free") == "21"
    ActionChains(page).move_to_element_with_offset(
        canvas, *browser.heatmap_cell(canvas, 0, 0)
    ).perform()
    tooltip = page.find_element(By.ID, "tooltip")
    WebDriverWait(page, 5).until(lambda _d: "ml/pod-p1" in tooltip.text)  # asked on hover
    assert tooltip.is_displayed() and "gpu-a · GPU 0" in tooltip.text
    assert "utilization 9" in tooltip.text  # 90 % and a little, as dashboardrows.py ran it
    assert "MI300X · ml/pod-p1 · PyTorchJob train" in tooltip.text
    legend = page.find_element(By.CSS_SELECTOR, ".heatmap .legend").rect
    hover = tooltip.rect
    assert (
        hover["y"] >= legend["y"] + legend["height"] or hover["x"] >= legend["x"] + legend["width"]
    ), "the tooltip covers the legend"
    ActionChains(page).move_to_element_with_offset(
        canvas, *browser.heatmap_cell(canvas, 4, 0)
    ).perform()
    WebDriverWait(page, 5).until(lambda _d: "gpu-e · GPU 0" in tooltip.text)
    WebDriverWait(page, 5).until(lambda _d: "free: no pod holds it" in tooltip.text)
    ActionChains(page).move_to_element_with_offset(
        canvas, *browser.heatmap_cell(canvas, 0, 0)
    ).perform()
    ActionChains(page).click().perform()
    WebDriverWait(page, 10).until(lambda d: d.current_url.endswith("#/nodes/gpu-a"))
    browser.wait_ready(page)
    assert page.find_element(By.TAG_NAME, "h1").text.startswith("gpu-a")


def test_navigation_from_a_list_to_a_workload(api: Served, page: WebDriver) -> None:
    browser.show(page, f"{api.url}#/workloads")
    assert set(browser.column(page, "workloads", 0)) == {"train", "web"}  # p3 has no owner
    page.find_element(By.LINK_TEXT, "train").click()
    WebDriverWait(page, 10).until(lambda d: d.current_url.endswith("#/workloads/w1"))
    browser.wait_ready(page)
    assert browser.column(page, "pods", 1) == ["gpu-a", "gpu-b"]
    assert page.find_elements(By.CSS_SELECTOR, "[data-chart='GPU Utilization'] canvas")
    # Each figure train's logs gave, a chart of its own, drawn.
    trained = page.find_elements(By.CSS_SELECTOR, "[data-chart^='training-']")
    assert sorted(str(c.get_attribute("data-chart")) for c in trained) == [
        f"training-{figure}" for figure in TRAINING
    ]
    assert all(c.find_elements(By.TAG_NAME, "canvas") for c in trained)


def test_gpu_hours_and_their_csv_are_the_apis(
    api: Served, page: WebDriver, downloads: Path
) -> None:
    browser.show(page, f"{api.url}#/gpu-hours?days=today")
    day = time.strftime("%Y-%m-%d", time.gmtime())
    hours = api.answer(f"/v1/gpuHours?start={day}&end={day}&group_by=namespace")
    assert isinstance(hours, dict)
    page.find_element(By.CSS_SELECTOR, "button[data-export='csv']").click()
    saved = downloads / f"gpu-hours-{day}-{day}.csv"
    WebDriverWait(page, 10).until(lambda _d: saved.exists() and saved.stat().st_size > 0)
    asked = f"/v1/gpuHours?start={day}&end={day}&group_by=namespace&order_by=held_gpu_hours"
    assert saved.read_bytes() == api.csv(asked + "&desc=true").encode()  # RFC 4180: CRLF
    held = [
        float(cell.get_attribute("data-value"))
        for cell in page.find_elements(By.CSS_SELECTOR, "[data-figure='held']")
    ]
    assert held == [row["held_gpu_hours"] for row in hours["data"]]
    assert browser.column(page, "gpu-hours", 0) == ["ml", "serve", "dev"]
    page.find_element(By.CSS_SELECTOR, "select[data-filter='group_by']").find_element(
        By.CSS_SELECTOR, "option[value='workload']"
    ).click()
    WebDriverWait(page, 10).until(lambda d: "group_by=workload" in d.current_url)
    browser.wait_ready(page)
    assert browser.column(page, "gpu-hours", 0)[0] == "ml/train (PyTorchJob)"
    teams = page.find_element(By.CSS_SELECTOR, "select[data-filter='group_by']")
    teams.find_element(By.CSS_SELECTOR, "option[value='label:team']").click()
    WebDriverWait(page, 10).until(lambda d: "group_by=label%3Ateam" in d.current_url)
    browser.wait_ready(page)
    assert browser.column(page, "gpu-hours", 0) == ["nlp", "ops", "(none)"]


def test_an_empty_cluster_says_so_and_why(tmp_path: Path, page: WebDriver) -> None:
    for served in _served(tmp_path, seeded=False):
        for route, says in (
            ("", "No GPU nodes yet: the jobs' node info has not run"),
            ("nodes", "No GPU nodes yet"),
            ("nodes?view=heatmap", "No GPUs reported yet"),
            ("workloads", "No GPU workloads yet"),
            ("idle", "Idle GPUs are not computed yet"),
            ("gpu-hours", "No GPU-hours in these days yet"),
        ):
            browser.show(page, f"{served.url}#/{route}")
            assert says in page.find_element(By.CSS_SELECTOR, "[data-empty]").text, route
            # Nothing feeds the figures yet, and the page says which source is missing.
            missing = {
                str(line.get_attribute("data-source")): line.text
                for line in page.find_elements(By.CSS_SELECTOR, "#sources [data-source]")
            }
            assert set(missing) == {"controller", "node_info", "agents"}, route
            assert missing["controller"].startswith("The controller (lens controller) has not")
        assert browser.console_problems(page) == []
        assert browser.failed_requests(page) == []


def test_agents_without_a_controller_are_not_a_cluster_with_nothing_idle(
    tmp_path: Path, page: WebDriver
) -> None:
    """`lens up` on a GPU host with no Kubernetes: readings arrive, nothing watches pods."""
    for served in _served(tmp_path, seeded=False):
        agents_only(served.db, time.time())
        browser.show(page, f"{served.url}#/idle")
        says = page.find_element(By.CSS_SELECTOR, "[data-empty]").text
        assert says.startswith("No GPU is known to be held: no controller has watched"), says
        banner = page.find_element(By.ID, "sources")
        assert banner.is_displayed() and "The controller (lens controller) has not" in banner.text
        assert "node agents" not in banner.text  # they report
        browser.show(page, f"{served.url}#/nodes?view=heatmap")
        canvas = page.find_element(By.CSS_SELECTOR, "canvas[data-heatmap='utilization']")
        assert canvas.get_attribute("data-cells") == "8"


def test_an_unknown_node_is_a_clear_empty_state(api: Served, page: WebDriver) -> None:
    browser.show(page, f"{api.url}#/nodes/nope")
    assert "No GPU node named nope" in page.find_element(By.CSS_SELECTOR, "[data-empty]").text


def test_a_token_is_asked_for_when_the_api_wants_one(tmp_path: Path, page: WebDriver) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(hashlib.sha256(b"s3cret").hexdigest() + "\n")
    authenticator = auth.Authenticator(digests=auth.TokenDigests(str(tokens)))
    for served in _served(tmp_path, seeded=True, tokens=authenticator):
        page.get(served.url)
        WebDriverWait(page, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "input[type=password]")
        )
        page.find_element(By.CSS_SELECTOR, "input[type=password]").send_keys("s3cret")
        page.find_element(By.CSS_SELECTOR, "form button").click()
        browser.wait_ready(page)
        assert browser.figures(page)["totalNodes"][0] == "6"
        page.execute_script("sessionStorage.clear()")


def test_the_page_refreshes_itself_as_the_cluster_fills(tmp_path: Path, page: WebDriver) -> None:
    for served in _served(tmp_path, seeded=False):
        browser.show(page, f"{served.url}#/?refresh=1")
        assert "No GPU nodes yet" in page.find_element(By.CSS_SELECTOR, "[data-empty]").text
        living_cluster(served.db, time.time())
        WebDriverWait(page, 15).until(lambda d: "totalNodes" in browser.figures(d))
        assert browser.figures(page)["totalNodes"][0] == "6"
        assert browser.console_problems(page) == [] and browser.failed_requests(page) == []


def test_lists_and_the_heatmap_page_within_the_apis_largest_page(
    tmp_path: Path, page: WebDriver
) -> None:
    for served in _served(tmp_path, seeded=True, max_page_size=5):
        browser.show(page, f"{served.url}#/nodes?view=heatmap")
        canvas = page.find_element(By.CSS_SELECTOR, "canvas[data-heatmap]")
        assert canvas.get_attribute("data-cells") == "48"  # ten pages of five
        browser.show(page, f"{served.url}#/nodes/gpu-a")
        assert len(browser.column(page, "gpus", 0)) == 8
        browser.show(page, f"{served.url}#/nodes")
        assert browser.column(page, "nodes", 0) == ["gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e"]
        assert "page 1 of 2" in page.find_element(By.CSS_SELECTOR, "[data-pager]").text
        assert browser.console_problems(page) == [] and browser.failed_requests(page) == []


def test_a_failed_refresh_keeps_the_page_and_says_so(tmp_path: Path, page: WebDriver) -> None:
    freshness = (By.ID, "freshness")
    for served in _served(tmp_path, seeded=True):
        browser.show(page, f"{served.url}#/?refresh=1")
        assert page.find_element(*freshness).text.startswith("updated ")
        served.stop()  # the API goes away (a restart, say)
        WebDriverWait(page, 10).until(
            lambda d: d.find_element(*freshness).text.startswith("refresh failed ")
        )
        assert browser.figures(page)["totalNodes"][0] == "6"  # still drawn
        assert page.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ready"
