"""The tool stand-ins print the real tools' shapes and agree with sysfs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lens.runtime.clock import FakeClock
from lens.sim.hosts import amdsmi
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree


def _run(tree: HostTree, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tree.tool(tool)), *args], capture_output=True, text=True, timeout=30)


def test_amd_smi_static_and_metric_from_the_executables(mi300x: HostTree) -> None:
    static = json.loads(_run(mi300x, "amd-smi", "static", "--json").stdout)
    gpus = static["gpu_data"]
    assert [g["bus"]["bdf"] for g in gpus] == [g.bdf for g in mi300x.node.gpus]
    assert gpus[0]["asic"]["market_name"] == "AMD Instinct MI300X"
    assert gpus[0]["vram"]["size"] == {"value": 196608, "unit": "MB"}
    assert gpus[0]["limit"]["slowdown_edge_temperature"] == "N/A"
    metric = json.loads(_run(mi300x, "amd-smi", "metric", "--json").stdout)["gpu_data"]
    reading = mi300x.node.gpu_readings[2]
    assert metric[2]["usage"]["gfx_activity"] == {"value": reading.utilization, "unit": "%"}
    assert metric[2]["power"]["socket_power"] == {"value": int(reading.power_w), "unit": "W"}
    assert metric[2]["temperature"]["edge"] == "N/A"


def test_amd_smi_before_26_prints_a_bare_list(memory_dir: Path) -> None:
    tree = HostTree(
        memory_dir, NodeSpec(gpus=2, rdma=0, amd_smi_layout="bare"), clock=FakeClock()
    ).build()
    document = json.loads(amdsmi.run(["static", "--json"], tree.state())[0])
    assert isinstance(document, list) and len(document) == 2


def test_partitions_are_separate_gpus_with_sparse_metrics(memory_dir: Path) -> None:
    tree = HostTree(
        memory_dir, NodeSpec(gpus=1, rdma=0, compute_partition="DPX"), clock=FakeClock()
    ).build()
    state = tree.state()
    metric = json.loads(amdsmi.run(["metric", "--json"], state)[0])["gpu_data"]
    assert len(metric) == 2
    assert metric[1]["power"] == "N/A"
    listed = json.loads(amdsmi.run(["list", "--json"], state)[0])
    assert [(g["bdf"], g["partition_id"]) for g in listed] == [
        (tree.node.gpus[0].bdf, 0),
        (tree.node.gpus[0].bdf, 1),
    ]
