"""GPU health on the agent's /metrics: a fault injected into the simulated node shows as the
GPU's state and reason, beside its holder labels, and promtool finds nothing wrong."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

from lens.runtime.clock import FakeClock
from lens.sim.hosts.tree import HostTree
from tests.roles.node_agent.conftest import MakeAgent


def _samples(text: str, family: str) -> list[tuple[dict[str, str], float]]:
    return [
        (dict(sample.labels), sample.value)
        for metric in text_string_to_metric_families(text)
        for sample in metric.samples
        if sample.name == family
    ]


def test_an_injected_fault_is_the_gpus_health_on_metrics(
    mi300x: HostTree,
    make_agent: MakeAgent,
    clock: FakeClock,
    promtool_problems: Callable[[bytes], str],
) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu",))
    agent.cycle.run()
    mi300x.node.add_memory_errors(3, uncorrectable=2)
    mi300x.node.throttle(4, frozenset({"prochot"}))
    for _ in range(70):
        clock.advance(1.0)
        mi300x.update()
        agent.cycle.run()
    text = agent.cycle.render_text()
    states = {
        labels["gpu"]: labels["state"]
        for labels, value in _samples(text, "lens_gpu_health")
        if value == 1.0
    }
    assert states == {
        **{str(i): "healthy" for i in range(8)},
        "3": "unhealthy",
        "4": "degraded",
    }
    reasons = {
        (labels["gpu"], labels["reason"])
        for labels, value in _samples(text, "lens_gpu_health_reason")
        if value == 1.0
    }
    assert reasons == {("3", "ecc_uncorrectable"), ("4", "throttle_prochot")}
    throttled = {
        (labels["gpu"], labels["throttler"])
        for labels, value in _samples(text, "lens_gpu_throttled")
        if value == 1.0
    }
    assert throttled == {("4", "prochot")}
    assert all("pod" in labels for labels, _ in _samples(text, "lens_gpu_health"))
    assert promtool_problems(text.encode()) == ""


def test_health_off_exports_no_health(mi300x: HostTree, make_agent: MakeAgent) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu",), gpu_health=False)
    mi300x.node.add_memory_errors(3, uncorrectable=2)
    mi300x.update()
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert "lens_gpu_health" not in text and "lens_gpu_throttled" not in text
    assert _samples(text, "lens_gpu_vram_bad_pages")  # a reading, not a judgement: still there
