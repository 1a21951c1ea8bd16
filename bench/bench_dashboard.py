"""`python -m bench dashboard [--loads N] [--preset large]`: the dashboard in headless Chromium
at 1,000 nodes (8,000 GPUs, about 5,000 GPU pods) — time from navigation to a drawn overview and
to a drawn heatmap of every GPU, and the bytes each first load transfers.

The cluster and database are the API benchmark's (bench_api.py: the large scenario an hour in,
what the controller, agents and jobs would have stored, on PostgreSQL), served by `lens api` on
a local port. Each page is loaded N times, each time in a new browser with an empty cache: the
time is the page's own `lens:drawn` performance mark (set once its data is drawn) from the
navigation's start; the bytes are the navigation's and every resource's transfer sizes (gzip
on the wire). The baseline, in the same browser and run, is fetching the same API answers the
page reads, with nothing drawn: the ratio is what drawing adds to downloading.
Budgets (issue 20): each page drawn within DRAWN_BUDGET_MS, each first load at most
FIRST_LOAD_BUDGET_BYTES.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from typing import Any

from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from bench import bench_api, bench_jobs_cycle, chromium

DRAWN_BUDGET_MS, FIRST_LOAD_BUDGET_BYTES = 1000.0, 500_000
PAGES = {"overview": "#/", "heatmap": "#/nodes?view=heatmap"}

# The API answers each page reads, fetched side by side as the page does (the baseline).
FETCH_OVERVIEW = """
const end = Math.floor(Date.now() / 1000), start = end - 21600;
const paths = ["/v1/clusters/overview", "/v1/idle?page_size=1",
  `/v1/nodes/gpuUtilizationHistory?start=${start}&end=${end}&step=60`,
  "/v1/clusters/consumers?page_size=10"];
await Promise.all(paths.map((p) => fetch(p).then((r) => r.json())));
"""
FETCH_HEATMAP = """
const paths = ["/v1/nodes/gpuAllocation", "/v1/clusters/gpuHeatmap?k=10000"];
await Promise.all(paths.map((p) => fetch(p).then((r) => r.json())));
"""
FETCHES = {"overview": FETCH_OVERVIEW, "heatmap": FETCH_HEATMAP}
TIMED = """
const done = arguments[arguments.length - 1];
const began = performance.now();
(async () => { %s })().then(() => done(performance.now() - began), (e) => done(String(e)));
"""


def _drawn(driver: WebDriver) -> tuple[float, int]:
    """The `lens:drawn` mark (ms from navigation) and the bytes transferred so far."""
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return performance.getEntriesByName('lens:drawn').length")
    )
    state = driver.execute_script("return document.body.dataset.state")
    if state != "ready":
        raise RuntimeError(f"the page did not draw: {driver.find_element('id', 'main').text}")
    mark = driver.execute_script("return performance.getEntriesByName('lens:drawn')[0].startTime")
    transferred = driver.execute_script(
        "return [...performance.getEntriesByType('navigation'),"
        " ...performance.getEntriesByType('resource')]"
        ".reduce((sum, e) => sum + e.transferSize, 0)"
    )
    return float(mark), int(transferred)


def _load(url: str, page: str) -> dict[str, float]:
    """One cold load of `page` in a new browser; then its data fetched again, nothing drawn."""
    driver = chromium.start()
    try:
        driver.set_script_timeout(60)
        driver.get(url + PAGES[page])
        drawn_ms, transferred = _drawn(driver)
        fetched_ms = driver.execute_async_script(TIMED % FETCHES[page])
        if not isinstance(fetched_ms, float | int):
            raise RuntimeError(f"fetching {page}'s data failed: {fetched_ms}")
        cells = driver.execute_script(
            "const c = document.querySelector('canvas[data-heatmap]');"
            " return c ? Number(c.dataset.cells) : 0"
        )
        return {
            "drawn_ms": drawn_ms,
            "bytes": transferred,
            "fetched_ms": float(fetched_ms),
            "cells": cells,
        }
    finally:
        driver.quit()


def _summary(loads: list[dict[str, float]]) -> dict[str, Any]:
    drawn = sorted(load["drawn_ms"] for load in loads)
    fetched = statistics.median(load["fetched_ms"] for load in loads)
    return {
        "drawn_p50_ms": round(statistics.median(drawn), 1),
        "drawn_max_ms": round(drawn[-1], 1),
        "first_load_bytes": int(max(load["bytes"] for load in loads)),
        "data_fetched_p50_ms": round(fetched, 1),
        "drawn_to_fetched_ratio": round(statistics.median(drawn) / fetched, 2),
        "heatmap_cells": int(loads[0]["cells"]),
    }


def run(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench dashboard")
    parser.add_argument("--loads", type=int, default=5, help="cold loads measured per page")
    parser.add_argument("--preset", default="large", help="scenario preset (small for a smoke run)")
    args = parser.parse_args(argv)
    with bench_jobs_cycle.stored_cluster(args.preset) as (_child, _api, db, caches):
        clock, nodes, setup = bench_api.filled(db, caches)
        server = bench_api.serve(db, clock)
        try:
            url = f"http://127.0.0.1:{server.port}/"
            pages = {
                page: _summary([_load(url, page) for _ in range(args.loads)]) for page in PAGES
            }
        finally:
            asyncio.run(server.stop())
    worst_drawn = max(page["drawn_p50_ms"] for page in pages.values())
    heaviest = max(page["first_load_bytes"] for page in pages.values())
    return {
        "nodes": len(nodes),
        "gpus": 8 * len(nodes),
        "data_setup_seconds": round(setup, 1),
        "loads_per_page": args.loads,
        "pages": pages,
        "budgets": {
            "worst_drawn_p50_ms": worst_drawn,
            "drawn_ok": worst_drawn <= DRAWN_BUDGET_MS,
            "heaviest_first_load_bytes": heaviest,
            "bytes_ok": heaviest <= FIRST_LOAD_BUDGET_BYTES,
        },
    }
