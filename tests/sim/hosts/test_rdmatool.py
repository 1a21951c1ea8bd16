"""The tool stand-ins print the real tools' shapes and agree with sysfs."""

from __future__ import annotations

import json
import subprocess

from lens.sim.hosts.tree import HostTree


def _run(tree: HostTree, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tree.tool(tool)), *args], capture_output=True, text=True, timeout=30)


def test_rdma_prints_devices_links_and_statistics(mi300x: HostTree) -> None:
    devices = json.loads(_run(mi300x, "rdma", "dev", "show", "-j").stdout)
    assert devices[0] == {
        "ifindex": 0,
        "ifname": "mlx5_0",
        "node_type": "ca",
        "fw": "28.39.1002",
        "node_guid": mi300x.node.nics[0].node_guid,
        "sys_image_guid": mi300x.node.nics[0].sys_image_guid,
    }
    text = _run(mi300x, "rdma", "dev", "show").stdout.splitlines()[0]
    assert text.startswith("0: mlx5_0: node_type ca fw 28.39.1002 node_guid ")
    stats = _run(mi300x, "rdma", "statistic", "show").stdout
    assert stats.startswith("link mlx5_0/1\n    rx_write_requests ")
    stats_json = json.loads(_run(mi300x, "rdma", "-j", "statistic", "show").stdout)
    assert stats_json[0]["ifname"] == "mlx5_0" and stats_json[0]["port"] == 1
    links = _run(mi300x, "rdma", "link", "show").stdout.splitlines()
    assert (
        links[0]
        == f"link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev {mi300x.node.nics[0].netdev}"
    )
    assert _run(mi300x, "rdma", "frob").returncode == 1
