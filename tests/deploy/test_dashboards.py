"""Lens's Grafana dashboards (deploy/grafana): provisioning-ready (a uid and title each, a
`datasource` variable of type prometheus, no data source uid written in), every PromQL
expression of every panel and variable accepted by promtool's parser, every metric they read
listed in docs/metrics.md (the original's dashboards queried series nothing produced), and —
against a real Prometheus holding what Lens's node agents, jobs and remote-write intake
produce for a simulated cluster — every panel's every query returning data.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.grafana import (
    BUILTINS,
    DASHBOARDS,
    ROOT,
    Dashboard,
    Query,
    Variable,
    dashboards,
    documented,
    expand,
    metric_names,
)
from tests.deploy.grafanalab import Prometheus, running_lab

PROVISIONING = ROOT / "deploy" / "grafana" / "provisioning" / "dashboards" / "lens.yaml"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
EXPECTED = {
    "lens-cluster",
    "lens-node",
    "lens-gpu",
    "lens-workload",
    "lens-rdma",
    "lens-gpu-exporter",
}
# What a variable stands for when the expressions are only parsed.
PLACEHOLDER = "x"
DATA_SECONDS = 60.0  # for every panel to have data once the chain runs (about 10 s here)
MOST_SELECTIONS = 64  # combinations of variable values tried per dashboard


@pytest.fixture(scope="module")
def boards() -> list[Dashboard]:
    return dashboards()


def _datasources(node: Any) -> Iterator[Any]:
    """Every `datasource` value anywhere in a dashboard's JSON."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                yield value
            yield from _datasources(value)
    elif isinstance(node, list):
        for item in node:
            yield from _datasources(item)


def test_the_six_dashboards_are_there(boards: list[Dashboard]) -> None:
    assert {board.uid for board in boards} == EXPECTED
    titles = [board.model["title"] for board in boards]
    assert len(set(titles)) == len(titles) and all(t.startswith("Lens / ") for t in titles)


def test_every_dashboard_is_provisioning_ready(boards: list[Dashboard]) -> None:
    for board in boards:
        model = board.model
        assert model["id"] is None, f"{board.uid}: an id belongs to one Grafana's database"
        assert len(board.uid) <= 40 and board.path.name == f"{board.uid}.json"
        assert "lens" in model["tags"]
        variables = model["templating"]["list"]
        assert variables[0] == {
            **variables[0],
            "name": "datasource",
            "type": "datasource",
            "query": "prometheus",
        }
        assert variables[0]["current"] == {}, "no data source of one Grafana chosen in the file"
        # Every query goes to the chosen data source: no uid of some Grafana's data source.
        for found in _datasources(model):
            assert found == DATASOURCE, (board.uid, found)
        ids = [panel["id"] for panel in board.panels()]
        assert len(set(ids)) == len(ids), board.uid
        for panel in board.panels():
            assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), (board.uid, panel["id"])
            assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
            if panel["type"] == "row":
                continue
            assert panel["title"] and panel["description"], (board.uid, panel["id"])
            refs = [target["refId"] for target in panel["targets"]]
            assert refs and len(set(refs)) == len(refs), (board.uid, panel["id"])


def test_links_lead_to_dashboards_that_exist(boards: list[Dashboard]) -> None:
    linked = set()
    for board in boards:
        for panel in board.panels():
            for override in panel["fieldConfig"].get("overrides", []):
                for prop in override["properties"]:
                    if prop["id"] == "links":
                        linked.update(link["url"].split("/")[2] for link in prop["value"])
    assert linked == {"lens-gpu", "lens-workload"}


def test_the_provisioning_file_serves_the_dashboards_folder() -> None:
    provisioning = yaml.safe_load(PROVISIONING.read_text())
    assert provisioning["apiVersion"] == 1
    (provider,) = provisioning["providers"]
    assert provider["type"] == "file" and provider["options"]["path"]
    readme = (ROOT / "deploy" / "grafana" / "README.md").read_text()
    for path in DASHBOARDS.glob("*.json"):
        assert path.name in readme, f"README.md says what {path.name} shows"


def _placeholders(board: Dashboard) -> dict[str, str]:
    return {variable.name: PLACEHOLDER for variable in board.variables()}


def _promtool_problems(queries: list[tuple[str, str]], directory: Path) -> str:
    """What `promtool check rules` says of `queries` (name, expr) as recording rules; empty
    when it accepts them all."""
    rules = [{"record": f"lens_dashboard:{name}", "expr": expr} for name, expr in queries]
    path = directory / "dashboards.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    checked = subprocess.run(
        ["promtool", "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return "" if checked.returncode == 0 else checked.stdout + checked.stderr


@pytest.mark.slow_timeout
def test_every_expression_parses_with_promtool(boards: list[Dashboard], tmp_path: Path) -> None:
    queries = [
        (f"{board.uid.replace('-', '_')}:q{i}", expand(q.expr, _placeholders(board)))
        for board in boards
        for i, q in enumerate(board.queries())
    ]
    assert len(queries) > 100
    assert _promtool_problems(queries, tmp_path) == ""
    # The check does catch a broken expression.
    broken = [("broken", expand("sum by (node (lens_gpu_power_watts)", {}))]
    assert "parse error" in _promtool_problems(broken, tmp_path)


def test_every_metric_is_one_lens_exports(boards: list[Dashboard]) -> None:
    docs = documented()
    for board in boards:
        for query in board.queries():
            names = metric_names(expand(query.expr, _placeholders(board)))
            assert names, f"{board.uid} {query.where}: reads no metric"
            unknown = sorted(name for name in names if not docs.has(name))
            assert not unknown, f"{board.uid} {query.where}: not in docs/metrics.md: {unknown}"


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("lens_gpu_power_watts", True),
        ("lens_http_request_duration_seconds_bucket", True),  # a histogram's
        ("log_consume_latency_seconds_count", True),  # a summary's
        ("lens_gpu_info_count", False),  # an info family has no _count
        ("rdma_stat_out_of_sequence", True),
        ("process_cpu_seconds_total", True),
        # What the original's dashboards and API read but no Lens process produces
        # (REFERENCE.md 3.3, 3.7).
        ("gpu_junction_temperature", False),
        ("gpu_used_vram", False),
        ("workload_gpu_utilization", False),
        ("juicefs_used_space", False),
        ("up", False),
    ],
)
def test_only_what_metrics_md_lists_counts_as_exported(name: str, listed: bool) -> None:
    assert documented().has(name) is listed


def test_the_exporter_view_shows_what_seed_004_asks(boards: list[Dashboard]) -> None:
    (board,) = [b for b in boards if b.uid == "lens-gpu-exporter"]
    charts = {
        panel["title"]: set().union(*(metric_names(t["expr"]) for t in panel["targets"]))
        for panel in board.panels()
        if panel["type"] == "timeseries"
    }
    assert charts["GPU utilization"] == {"gpu_utilization"}
    assert charts["VRAM used"] == {"lens_gpu_memory_used_bytes", "lens_gpu_memory_total_bytes"}
    assert charts["Power"] == {"lens_gpu_power_watts"}


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("up", {"up"}),
        ('sum by (node, gpu) (rate(a_total{x="by (b)"}[5m]))', {"a_total"}),
        ("max(b) by (le) / on (node) group_left (team) c offset 5m", {"b", "c"}),
        ("histogram_quantile(0.99, sum by (le) (rate(h_bucket[1m])))", {"h_bucket"}),
        ("time() - d{e=~'f|g'} > bool 1e3", {"d"}),
        ("sum_over_time(count(x)[5m:10s]) * 2000 / 3600000", {"x"}),
        ('label_replace(y, "dst", "$1", "src", "(.*)") and z unless w', {"y", "z", "w"}),
        ("vector(1) + scalar(v)", {"v"}),
    ],
)
def test_metric_names_are_read_from_expressions(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_grafanas_variables_are_replaced() -> None:
    expr = 'rate(x{node=~"$node", gpu="${gpu}"}[$__rate_interval]) * $__interval_ms'
    assert expand(expr, {"node": "n1", "gpu": "0"}) == (
        f'rate(x{{node=~"n1", gpu="0"}}[{BUILTINS["__rate_interval"]}]) * '
        f"{BUILTINS['__interval_ms']}"
    )
    with pytest.raises(KeyError, match=r"\$nope"):
        expand('x{a="$nope"}', {})


# --- every panel shows data ---------------------------------------------------------------------


def _selections(
    store: Prometheus, variables: list[Variable], chosen: dict[str, str]
) -> Iterator[dict[str, str]]:
    """Each combination of values Grafana would offer the variables, in order: "All" where
    the variable offers it, else the values its label_values query finds."""
    if not variables:
        yield chosen
        return
    variable, rest = variables[0], variables[1:]
    if variable.all_value is not None:
        options = [variable.all_value]
    else:
        options = store.label_values(variable.label, expand(variable.selector, chosen))
    for option in options:
        yield from _selections(store, rest, {**chosen, variable.name: option})


def _shows(store: Prometheus, expr: str) -> bool:
    """Whether `expr` evaluates now to at least one number (NaN, a histogram with nothing
    observed, is a gap on a chart)."""
    return any(math.isfinite(float(sample["value"][1])) for sample in store.query(expr))


def _empty(store: Prometheus, queries: list[Query], values: dict[str, str]) -> list[str]:
    return [q.where for q in queries if not _shows(store, expand(q.expr, values))]


def _best_selection(store: Prometheus, board: Dashboard) -> tuple[dict[str, str], list[str]]:
    """A choice of the variables under which every panel query returns data, or the choice
    leaving the fewest empty, with those."""
    queries = board.panel_queries()
    best: tuple[dict[str, str], list[str]] = ({}, ["no value for the variables"])
    for tried, values in enumerate(_selections(store, board.variables(), {})):
        if tried == MOST_SELECTIONS:
            break
        empty = _empty(store, queries, values)
        if not empty:
            return values, []
        if len(empty) < len(best[1]):
            best = (values, empty)
    return best


@pytest.mark.timeout(180)
def test_every_panel_shows_data_from_lens(
    boards: list[Dashboard],
    tmp_path: Path,
    free_port: Callable[[], int],
    eventually: Callable[..., None],
) -> None:
    with running_lab(tmp_path, [free_port(), free_port()]) as (store, scraper):
        eventually(store.ready, timeout=30)
        eventually(scraper.ready, timeout=30)
        pending = {board.uid: board for board in boards}
        missing: dict[str, tuple[dict[str, str], list[str]]] = {}

        def every_panel_shows_data() -> bool:
            for uid, board in list(pending.items()):
                values, empty = _best_selection(store, board)
                missing[uid] = (values, empty)
                if not empty:
                    del pending[uid], missing[uid]
            return not pending

        try:
            eventually(every_panel_shows_data, timeout=DATA_SECONDS)
        except AssertionError:
            assert not missing, missing  # each dashboard: the variables tried, panels empty
        # The workload labels came through Lens's intake: the store has GPU series carrying
        # them, and the scraper, which only scraped, has none.
        labelled = 'count(lens_gpu_utilization_ratio{workload_uid!=""})'
        assert store.query(labelled) and not scraper.query(labelled)
