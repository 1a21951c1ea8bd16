"""`promtool check metrics` (Debian's prometheus package) finds no error and no warning in what a
node agent serves on /metrics, whatever simulated node it runs on, nor in the golden files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lens.runtime.config import KubeletConfig
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.server import KubeletServer, inventory_from_tree

from .conftest import MakeAgent, Running

TESTS = Path(__file__).resolve().parents[2]
GOLDEN_FILES = sorted(TESTS.glob("**/golden/*.prom"))


def test_promtool_reports_a_name_that_repeats_its_type(
    promtool_problems: Callable[[bytes], str],
) -> None:
    # The check itself works: the two IB names before issue 16 gave exactly this warning.
    old = b"# HELP lens_ib_port_hw_counter_total X.\n# TYPE lens_ib_port_hw_counter_total counter\n"
    problems = promtool_problems(old + b'lens_ib_port_hw_counter_total{counter="a"} 1\n')
    assert "should not include type 'counter'" in problems


@pytest.mark.slow_timeout
@pytest.mark.parametrize("host", ["mi300x", "cpx", "h100"])
def test_metrics_of_a_simulated_node_pass_promtool(
    host: str,
    request: pytest.FixtureRequest,
    make_agent: MakeAgent,
    start: Callable[..., Running],
    eventually: Callable[..., None],
    tmp_path: Path,
    promtool_problems: Callable[[bytes], str],
) -> None:
    tree: HostTree = request.getfixturevalue(host)
    nvml = tree.nvml() if tree.spec.vendor == "nvidia" else None
    # A kubelet with a GPU pod, so that the kubelet collectors' families are in the output too.
    kube = KubeApiServer().start()
    resource = "nvidia.com/gpu" if nvml is not None else "amd.com/gpu"
    kubelet = KubeletServer(
        kube.store,
        "gpu-node-1",
        directory=tmp_path / "kubelet",
        inventory=inventory_from_tree(tree.node.gpus, resource),
    ).start()
    try:
        kube.create(_gpu_pod(resource))
        token = tmp_path / "token"
        token.write_text("sim-kubelet-token")
        config = KubeletConfig(
            url=kubelet.url, token_file=str(token), ca_file=str(kubelet.cert.ca_file)
        )
        agent = make_agent(tree, nvml=nvml, kubelet=config)
        running = start(agent)
        eventually(lambda: agent.cycle.cycles >= 1, timeout=15)
        status, body = running.get("/metrics")
    finally:
        kubelet.stop()
        kube.stop()
    assert status == 200
    text = body.decode()
    for family in ("lens_gpu_info", "lens_ib_port_state", "lens_kube_node_gpu_requested"):
        assert f"# TYPE {family} " in text, "the families under test are in the output"
    assert promtool_problems(body) == ""


def _gpu_pod(resource: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": "default"},
        "spec": {
            "nodeName": "gpu-node-1",
            "containers": [{"name": "main", "resources": {"limits": {resource: "1"}}}],
        },
        "status": {"phase": "Running"},
    }


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_golden_files_pass_promtool(path: Path, promtool_problems: Callable[[bytes], str]) -> None:
    # STYLE S7.7: what the golden files pin down is also well named.
    assert promtool_problems(path.read_bytes()) == ""


def test_there_are_golden_files_to_check() -> None:
    assert {p.name for p in GOLDEN_FILES} >= {"rdma.prom", "mi300x.prom", "h100.prom"}
