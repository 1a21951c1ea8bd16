"""The tool stand-ins print the real tools' shapes and agree with sysfs."""

from __future__ import annotations

import subprocess

import pytest

from lens.sim.hosts import amdsmi, rocmsmi
from lens.sim.hosts.tree import HostTree


def _run(tree: HostTree, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tree.tool(tool)), *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("fail", lambda r: r.returncode == 255 and "Driver not loaded" in r.stderr),
        ("garbage", lambda r: r.returncode == 0 and "Segmentation fault" in r.stdout),
        ("banner", lambda r: r.stdout.startswith("WARNING:") and '"gpu_data"' in r.stdout),
    ],
)
def test_broken_tools(mi300x: HostTree, fault: str, check: object) -> None:
    mi300x.break_tool("amd-smi", fault)
    result = _run(mi300x, "amd-smi", "static", "--json")
    assert check(result)  # type: ignore[operator]


def test_unknown_commands_and_missing_flags() -> None:
    state = {"gpus": [], "amd_smi_layout": "gpu_data", "driver_version": "x"}
    assert amdsmi.run(["static"], state)[1] == 2
    assert amdsmi.run(["frob", "--json"], state)[1] == 255
    assert rocmsmi.run(["-t"], state)[1] == 2
    assert rocmsmi.run(["-t", "--json"], state) == ("", 0)


def test_a_tool_prints_exactly_the_bytes_it_is_given(mi300x: HostTree) -> None:
    mi300x.tool_prints("rdma", b"[{\xff}]\n")
    for args in (("-j", "dev", "show"), ("link", "show")):
        result = subprocess.run([str(mi300x.tool("rdma")), *args], capture_output=True, timeout=30)
        assert (result.returncode, result.stdout) == (0, b"[{\xff}]\n")
    mi300x.break_tool("rdma", None)
    assert _run(mi300x, "rdma", "-j", "dev", "show").stdout.startswith('[{"ifindex"')
