"""Static facts refreshed at start and on a loop: never raising, counted as `static_facts`."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices.statics import StaticFactsSource
from lens.devices.sysfs import HostFiles
from lens.devices.vendors import VendorPresence
from lens.roles.node_agent.cycle import CollectorMetrics
from lens.roles.node_agent.refreshing import NAME, StaticRefresh
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.hosts.tree import HostTree


class Tools:
    """A Runner answering every tool with one text, or raising one exception."""

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer

    def run(self, command: Sequence[str]) -> str:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Rig:
    def __init__(self, tree: HostTree, clock: FakeClock, tools: Tools) -> None:
        host = HostFiles(tree.root)
        self.metrics = SelfMetrics(process=False)
        self.statics = StaticFactsSource(
            host, tools, amd_smi="amd-smi", rocm_smi="rocm-smi", wall_time=clock.time
        )
        self.refresh = StaticRefresh(
            vendors=VendorPresence(host),
            statics=self.statics,
            metrics=CollectorMetrics(self.metrics),
            clock=clock,
        )

    def sample(self, name: str, **labels: str) -> float | None:
        return self.metrics.registry.get_sample_value(name, {"collector": NAME, **labels})


def _amd_smi(tree: HostTree) -> str:
    return json.dumps(
        [{"bus": {"bdf": g.bdf}, "asic": {"market_name": "X"}} for g in tree.node.gpus]
    )


def test_a_refresh_is_counted_as_the_static_facts_collector(
    mi300x: HostTree, clock: FakeClock
) -> None:
    rig = Rig(mi300x, clock, Tools(_amd_smi(mi300x)))
    rig.refresh()
    rig.refresh.check()
    assert rig.statics.current().source == "amd-smi"
    assert rig.sample("lens_collector_success") == 1
    assert rig.sample("lens_collector_runs_total", result="success") == 1
    assert rig.sample("lens_collector_last_success_timestamp_seconds") == clock.time()
    assert rig.sample("lens_collector_problems_total") is None


def test_tools_that_fail_while_sysfs_answers_are_problems(
    mi300x: HostTree, clock: FakeClock
) -> None:
    rig = Rig(mi300x, clock, Tools("Segmentation fault {["))
    rig.refresh()
    rig.refresh.check()  # sysfs gave the facts: ready
    assert rig.statics.current().source == "sysfs"
    assert rig.sample("lens_collector_success") == 1
    assert rig.sample("lens_collector_problems_total") == 2, "amd-smi and rocm-smi"


def test_an_unreadable_sysfs_shows_in_readiness_and_metrics(
    mi300x: HostTree, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    drm = mi300x.root / "sys/class/drm"
    for entry in drm.iterdir():
        entry.unlink()
    drm.rmdir()
    drm.write_text("not a directory\n")
    rig = Rig(mi300x, clock, Tools(_amd_smi(mi300x)))
    with caplog.at_level(logging.WARNING, logger="lens.roles.node_agent.refreshing"):
        rig.refresh()
        rig.refresh()
    assert [r.getMessage() for r in caplog.records] == ["static facts not refreshed"], (
        "logged once, when it starts failing"
    )
    with pytest.raises(errors.SourceError, match="static facts not refreshed: /sys/class/drm"):
        rig.refresh.check()
    assert rig.sample("lens_collector_success") == 0
    assert rig.sample("lens_collector_runs_total", result="error") == 2


def test_a_crash_in_a_parser_is_contained_and_shows_until_a_refresh_succeeds(
    mi300x: HostTree, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    tools = Tools(RuntimeError("a bug"))
    rig = Rig(mi300x, clock, tools)
    with caplog.at_level(logging.ERROR, logger="lens.roles.node_agent.refreshing"):
        rig.refresh()  # the agent calls this before it starts: it must not raise
    assert [r.getMessage() for r in caplog.records] == ["static facts refresh crashed"]
    with pytest.raises(errors.SourceError, match="RuntimeError: a bug"):
        rig.refresh.check()
    tools.answer = _amd_smi(mi300x)
    rig.refresh()
    rig.refresh.check()
    assert rig.sample("lens_collector_success") == 1


OUTPUTS = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=10,
    ).map(json.dumps),
    st.sampled_from(["[" * 5000, "[" * 50_000 + "]" * 50_000, '[{"bus": {"bdf": " "}}]']),
)


@given(OUTPUTS)
def test_any_tool_output_leaves_the_agent_ready_with_facts(
    mi300x: HostTree, clock: FakeClock, output: str
) -> None:
    rig = Rig(mi300x, clock, Tools(output))
    rig.refresh()
    rig.refresh.check()
    assert len(rig.statics.current().facts) == 8
    assert rig.sample("lens_collector_success") == 1
