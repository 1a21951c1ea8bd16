"""The entry point of the tool stand-ins (amd-smi, rocm-smi, rdma) that a host tree installs.

Each executable calls `main(tool, argv, root)`, which answers from the tree's state file
(.lens-sim/state.json) so the tools agree with the sysfs files, through amdsmi.py, rocmsmi.py
and rdmatool.py. A `faults` entry in the state makes a tool fail, print garbage, hang or print
a warning banner before its JSON, for error-path tests; `print` makes it print exactly the
bytes a test stored (`HostTree.tool_prints`): non-UTF-8, deeply nested or oddly typed output.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lens.sim.hosts import amdsmi, rdmatool, rocmsmi

STATE_FILE = ".lens-sim/state.json"


def output_file(tool: str) -> str:
    """Where, under the tree's root, the bytes a `print` fault prints are kept."""
    return f".lens-sim/{tool}.out"


TOOLS: dict[str, Callable[[list[str], dict[str, Any]], tuple[str, int]]] = {
    "amd-smi": amdsmi.run,
    "rocm-smi": rocmsmi.run,
    "rdma": rdmatool.run,
}


def main(tool: str, argv: list[str], root: str) -> int:
    """What the executable stand-in runs; honours the faults set in the state file."""
    state = json.loads((Path(root) / STATE_FILE).read_text())
    fault = state.get("faults", {}).get(tool)
    if fault == "fail":
        sys.stderr.write("ERROR:root:Driver not loaded (amdgpu not found in modules)\n")
        return 255
    if fault == "garbage":
        sys.stdout.write("Segmentation fault (core dumped) {[\n")
        return 0
    if fault == "print":
        sys.stdout.buffer.write((Path(root) / output_file(tool)).read_bytes())
        return 0
    if fault == "hang":
        time.sleep(3600)
    if fault == "banner":
        sys.stdout.write(
            "WARNING: AMD GPU device(s) is/are in a low-power state. "
            "Check power control/runtime_status\n\n"
        )
    output, code = TOOLS[tool](argv, state)
    sys.stdout.write(output)
    return code
