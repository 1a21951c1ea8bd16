"""The tool stand-ins print the real tools' shapes and agree with sysfs."""

from __future__ import annotations

import json
import subprocess

from lens.sim.hosts.tree import HostTree


def _run(tree: HostTree, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tree.tool(tool)), *args], capture_output=True, text=True, timeout=30)


def test_rocm_smi_prints_one_line_of_strings(mi300x: HostTree) -> None:
    output = _run(
        mi300x, "rocm-smi", "-t", "-P", "-u", "--showmemuse", "-b", "--showbus", "--json"
    ).stdout
    assert output.count("\n") == 1
    cards = json.loads(output)
    card = cards["card0"]
    assert card["GPU use (%)"] == "10"
    assert "Current Socket Graphics Package Power (W)" in card
    assert "Temperature (Sensor edge) (C)" not in card
    assert card["PCI Bus"] == mi300x.node.gpus[0].bdf.upper()
    assert all(isinstance(v, str) for c in cards.values() for v in c.values())
    driver = json.loads(_run(mi300x, "rocm-smi", "--showdriverversion", "--json").stdout)
    assert driver == {"system": {"Driver version": "6.10.5"}}
