"""The node agent end to end on simulated nodes: metrics, REST, readiness, failures."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.config import KubeletConfig
from lens.sim.hosts.tree import AMD_DRIVER_VERSION, HostTree

from .conftest import MakeAgent, Running


def _series(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{") or line == name]


@pytest.mark.slow_timeout
def test_an_mi300x_node_serves_metrics_and_rest(
    mi300x: HostTree, make_agent: MakeAgent, start: Callable[..., Running], eventually
) -> None:
    agent = make_agent(mi300x)
    assert agent.vendors.present("amd") and not agent.vendors.present("nvidia")
    assert agent.statics.current().source == "amd-smi", "static facts are read before the start"
    running = start(agent)
    eventually(lambda: agent.cycle.cycles >= 1)
    status, body = running.get("/metrics")
    text = body.decode()
    assert status == 200
    assert len(_series(text, "lens_gpu_utilization_ratio")) == 8
    assert len(_series(text, "gpu_utilization")) == 8
    assert 'model="AMD Instinct MI300X"' in text, "the first scrape already has amd-smi's name"
    assert len(_series(text, "lens_ib_port_transmit_bytes_total")) == 8
    assert len(_series(text, "rdma_stat_rx_write_requests")) == 8
    assert 'lens_collector_success{collector="amdgpu"} 1.0' in text
    assert 'collector="nvidia"' not in text, "no NVIDIA GPUs on the bus: no series at all"
    assert running.get("/v1/metrics")[1].decode().count("# TYPE lens_gpu_info gauge") == 1
    agent.process.health.evaluate_readiness()  # the readiness loop's next run, without waiting
    assert running.get("/readyz")[0] == 200
    assert running.data("/v1/gpuDriverVersion") == AMD_DRIVER_VERSION
    gpus = running.data("/v1/gpus")
    assert [g["bus"]["bdf"] for g in gpus] == [g.bdf for g in mi300x.node.gpus]
    assert gpus[0]["dri_device"] == {
        "pciAddr": mi300x.node.gpus[0].bdf,
        "card": "/dev/dri/card1",
        "cardId": 0,
        "render": "/dev/dri/renderD128",
    }
    assert gpus[0]["static_facts"]["source"] == "amd-smi"
    metrics = running.data("/v1/cardMetrics")
    assert [m["gpu_use_percent"] for m in metrics] == [10.0 * (i + 1) for i in range(8)]
    assert set(running.data("/v1/driMapping")) == {f"/dev/dri/card{i}" for i in range(1, 9)}
    rdma = running.data("/v1/rdma")
    assert [d["ifname"] for d in rdma] == [f"mlx5_{i}" for i in range(8)]
    assert rdma[0]["node_type"] == "ca" and rdma[0]["uverbs"] == ["uverbs0"]


def test_unknown_collectors_fail_at_start(mi300x: HostTree, make_agent: MakeAgent) -> None:
    with pytest.raises(errors.ConfigError, match="unknown: gpu") as failure:
        make_agent(mi300x, collectors=("amdgpu", "gpu"))
    assert "amdgpu, nvidia, dri, rdma, kubelet, ephemeral_storage" in str(failure.value)


def test_disabled_collectors_do_not_run(mi300x: HostTree, make_agent: MakeAgent) -> None:
    agent = make_agent(mi300x, collectors=("rdma",))
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert "lens_gpu_" not in text and "lens_ib_port_state" in text


def test_a_failing_gpu_collector_drops_its_metrics_but_not_the_inventory(
    mi300x: HostTree, make_agent: MakeAgent, clock: FakeClock
) -> None:
    agent = make_agent(mi300x)
    agent.cycle.run()
    for card in (mi300x.root / "sys/class/drm").glob("card*"):
        card.unlink()
    clock.advance(1)
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert "lens_gpu_" not in text and "gpu_utilization{" not in text
    assert "lens_ib_port_state" in text, "other collectors are unaffected"
    observed = agent.state.gpus["amd"].get()
    assert observed is not None and observed.failure == "no amdgpu cards under /sys/class/drm"
    assert len(agent.state.known_gpus()) == 8, "the inventory keeps the last good GPUs"


@pytest.mark.slow_timeout
def test_a_broken_amd_smi_falls_back_and_says_so(
    mi300x: HostTree, make_agent: MakeAgent, start: Callable[..., Running], eventually
) -> None:
    mi300x.break_tool("amd-smi", "hang")
    mi300x.break_tool("rocm-smi", "fail")
    agent = make_agent(mi300x, collectors=("amdgpu", "dri"), tool_timeout=1)
    running = start(agent)
    eventually(lambda: agent.cycle.cycles >= 1)
    facts = running.data("/v1/gpus")[0]["static_facts"]
    assert facts["source"] == "sysfs" and len(facts["problems"]) == 2
    assert "did not answer within 1 s" in facts["problems"][0]
    assert running.data("/v1/gpuDriverVersion") == AMD_DRIVER_VERSION
    assert "AMD Instinct MI300X OAM" in running.get("/metrics")[1].decode()


def test_a_partitioned_node_maps_every_partition(cpx: HostTree, make_agent: MakeAgent) -> None:
    agent = make_agent(cpx, collectors=("amdgpu", "dri"))
    agent.cycle.run()
    assert agent.state.gpu_units() == 16, "each CPX partition is a GPU to the device plugin"
    text = agent.cycle.render_text()
    assert len(_series(text, "lens_gpu_partition_utilization_ratio")) == 16


def test_an_nvidia_node(h100: HostTree, make_agent: MakeAgent) -> None:
    agent = make_agent(h100, nvml=h100.nvml())
    assert agent.vendors.present("nvidia") and not agent.vendors.present("amd")
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert len(_series(text, "lens_gpu_power_watts")) == 2
    assert 'vendor="nvidia"' in text and 'driver_version="550.54.15"' in text
    assert len(_series(text, "lens_ib_port_state")) == 6, "one InfiniBand port, six states"


def test_both_vendors_on_one_node(mi300x: HostTree, h100: HostTree, make_agent: MakeAgent) -> None:
    nvidia = mi300x.root / "sys/bus/pci/devices/0000:f1:00.0"
    nvidia.mkdir()
    (nvidia / "vendor").write_text("0x10de\n")
    (nvidia / "class").write_text("0x030200\n")
    agent = make_agent(mi300x, nvml=h100.nvml(), collectors=("amdgpu", "nvidia"))
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert text.count("# TYPE lens_gpu_info gauge") == 1, "one family for both vendors"
    ids = sorted(int(line.split('"')[1]) for line in _series(text, "gpu_utilization"))
    assert ids == list(range(10)), "NVIDIA GPUs are numbered after the AMD ones"


@pytest.mark.slow_timeout
def test_kubelet_allocation_and_storage(
    mi300x: HostTree, make_agent: MakeAgent, tmp_path: Path
) -> None:
    from lens.sim.kube.server import KubeApiServer
    from lens.sim.kubelet.server import KubeletServer, inventory_from_tree

    kube = KubeApiServer().start()
    server = KubeletServer(
        kube.store,
        "gpu-node-1",
        directory=tmp_path / "kubelet",
        inventory=inventory_from_tree(mi300x.node.gpus, "amd.com/gpu"),
    ).start()
    try:
        token = tmp_path / "token"
        token.write_text("sim-kubelet-token")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "train-0", "namespace": "default"},
            "spec": {
                "nodeName": "gpu-node-1",
                "containers": [
                    {"name": n, "resources": {"limits": {"amd.com/gpu": "2"}}} for n in "ab"
                ],
            },
            "status": {"phase": "Running"},
        }
        kube.create(pod)
        kubelet = KubeletConfig(
            url=server.url, token_file=str(token), ca_file=str(server.cert.ca_file)
        )
        agent = make_agent(mi300x, kubelet=kubelet)
        agent.cycle.run()
        text = agent.cycle.render_text()
        assert "node_k8s_gpu_allocation_rate 50.0" in text, "4 of 8 GPUs, the pod counted once"
        assert 'lens_kube_node_gpu_requested{resource="amd.com/gpu"} 4.0' in text
        assert 'resource="nvidia.com/gpu"' not in text
        assert (
            'pod_ephemeral_storage_usage_bytes{pod_namespace="default",pod_name="train-0"' in text
        )
        assert 'node_ephemeral_storage_capacity_bytes{node="gpu-node-1"}' in text
        assert 'lens_kube_node_fs_used_bytes{fs="root"}' in text
    finally:
        server.stop()
        kube.stop()


def test_without_a_kubelet_url_the_kubelet_collectors_are_off(
    mi300x: HostTree, make_agent: MakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="lens.roles.node_agent.main"):
        agent = make_agent(mi300x)
    assert any(
        r.getMessage() == "kubelet collectors off: kubelet.url is empty" for r in caplog.records
    )
    agent.cycle.run()
    assert 'collector="kubelet"' not in json.dumps(agent.cycle.render_text())


def test_an_unreadable_sysfs_at_start_is_logged_not_fatal(
    mi300x: HostTree, make_agent: MakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    devices = mi300x.root / "sys/bus/pci/devices"
    for link in devices.iterdir():
        link.unlink()
    devices.rmdir()
    devices.write_text("not a directory\n")
    with caplog.at_level("WARNING", logger="lens.roles.node_agent.refreshing"):
        agent = make_agent(mi300x, collectors=("rdma",))
    assert any(r.getMessage() == "static facts not refreshed" for r in caplog.records)
    agent.cycle.run()
    assert "lens_ib_port_state" in agent.cycle.render_text()


# --- issue 16, point 9: no tool output stops the agent from starting ----------------------------

_ODD_FIELDS = {
    "byte": {"asic": {"market_name": "MI300X @@"}},
    "blank": {"asic": {"market_name": "MI300X"}, "numa": {"node": " "}},
    "unit": {"asic": {"market_name": "MI300X"}, "vram": {"size": {"value": 1, "unit": []}}},
}


def _amd_smi_printing(tree: HostTree, odd: str) -> bytes:
    """amd-smi's JSON for the tree's GPUs with one odd field each ("@@" is a non-UTF-8 byte)."""
    gpus = [{"bus": {"bdf": gpu.bdf}, **_ODD_FIELDS[odd]} for gpu in tree.node.gpus]
    return json.dumps({"gpu_data": gpus}).encode().replace(b"@@", b"\xff")


@pytest.mark.slow_timeout
@pytest.mark.parametrize("odd", sorted(_ODD_FIELDS))
def test_the_agent_starts_whatever_field_amd_smi_garbles(
    mi300x: HostTree, make_agent: MakeAgent, odd: str
) -> None:
    # Each raised out of build() (UnicodeDecodeError, IndexError, TypeError): the agent
    # crash-looped. Now the odd field is unknown and the rest of amd-smi's facts are used.
    mi300x.tool_prints("amd-smi", _amd_smi_printing(mi300x, odd))
    agent = make_agent(mi300x, collectors=("amdgpu",))
    agent.cycle.run()
    text = agent.cycle.render_text()
    assert len(_series(text, "lens_gpu_utilization_ratio")) == 8
    assert agent.statics.current().source == "amd-smi" and 'model="MI300X' in text
    health = agent.process.health
    health.evaluate_readiness()
    assert health.readiness().ok


@pytest.mark.slow_timeout
def test_the_agent_starts_when_amd_smi_nests_too_deeply(
    mi300x: HostTree, make_agent: MakeAgent
) -> None:
    # RecursionError out of build(): the agent crash-looped.
    mi300x.tool_prints("amd-smi", b"[" * 100_000 + b"]" * 100_000)
    mi300x.break_tool("rocm-smi", "fail")
    agent = make_agent(mi300x, collectors=("amdgpu",))
    agent.cycle.run()
    assert len(_series(agent.cycle.render_text(), "lens_gpu_utilization_ratio")) == 8
    health = agent.process.health
    health.evaluate_readiness()
    assert health.readiness().ok, "sysfs gave the facts: a broken tool is no reason to be unready"
    samples = agent.process.metrics.registry
    labels = {"collector": "static_facts"}
    assert samples.get_sample_value("lens_collector_success", labels) == 1
    assert samples.get_sample_value("lens_collector_problems_total", labels) == 2
    assert "amd-smi printed JSON nested too deeply" in agent.statics.current().problems[0]


@pytest.mark.slow_timeout
def test_static_facts_that_cannot_be_read_show_in_readyz_and_metrics(
    mi300x: HostTree, make_agent: MakeAgent, start: Callable[..., Running], eventually
) -> None:
    drm = mi300x.root / "sys/class/drm"
    for entry in drm.iterdir():
        entry.unlink()
    drm.rmdir()
    drm.write_text("not a directory\n")
    agent = make_agent(mi300x, collectors=("amdgpu", "rdma"))
    running = start(agent)
    eventually(lambda: agent.cycle.cycles >= 1)
    agent.process.health.evaluate_readiness()
    status, body = running.get("/readyz")
    check = json.loads(body)["checks"]["static_facts"]
    assert status == 503 and not check["ok"]
    assert "static facts not refreshed: /sys/class/drm: Not a directory" in check["detail"]
    text = running.get("/metrics")[1].decode()
    assert 'lens_collector_success{collector="static_facts"} 0.0' in text
    assert 'lens_collector_success{collector="amdgpu"} 0.0' in text
    assert "lens_ib_port_state" in text, "the other collectors run"


@pytest.mark.slow_timeout
def test_figures_and_static_facts_pair_by_pci_address_whatever_order_the_tools_print(
    mi300x: HostTree, make_agent: MakeAgent, start: Callable[..., Running], eventually
) -> None:
    """The original paired amd-smi's static facts and metrics by array position, so a tool
    listing GPUs in another order gave each GPU another's figures (REFERENCE.md 15.1 #15)."""
    printed = subprocess.run(
        [mi300x.tool("amd-smi"), "static", "--json"], capture_output=True, check=True
    ).stdout
    static = json.loads(printed)
    entries = static["gpu_data"] if isinstance(static, dict) else static
    random.Random(7).shuffle(entries)
    assert [e["bus"]["bdf"] for e in entries] != [g.bdf for g in mi300x.node.gpus]
    mi300x.tool_prints("amd-smi", json.dumps(static))
    agent = make_agent(mi300x)
    running = start(agent)
    eventually(lambda: agent.cycle.cycles >= 1)
    index_of = {gpu.bdf: i for i, gpu in enumerate(mi300x.node.gpus)}
    gpus = running.data("/v1/gpus")
    assert agent.statics.current().source == "amd-smi"
    assert {g["bus"]["bdf"]: g["asic"]["oam_id"] for g in gpus} == index_of
    cards = running.data("/v1/cardMetrics")
    assert len(cards) == 8
    for card in cards:
        index = index_of[card["pci_bus_id"]]
        assert card["gpu"] == index
        assert card["gpu_use_percent"] == 10.0 * (index + 1)
