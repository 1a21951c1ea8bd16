"""HostTree: the files a node agent reads on a real GPU node, built under a directory.

`build()` writes sysfs, /dev and the tool stand-ins for a NodeSpec; `update()` moves the
readings to the clock's current time and rewrites what changes, so collectors see load come and
go. Tests and `lens sim node` use it; the NVML stand-in and the tools read the same state.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from lens.runtime.clock import Clock, SystemClock
from lens.sim.hosts import amdgpu, dri, files, infiniband, nvml, profiles, tooling
from lens.sim.hosts.state import NodeModel, NodeSpec

AMD_DRIVER_VERSION = "6.10.5"
TOOL_PATHS = {
    "amd-smi": "opt/rocm/bin/amd-smi",
    "rocm-smi": "opt/rocm/bin/rocm-smi",
    "rdma": "usr/sbin/rdma",
}


class HostTree:
    """A simulated node's host filesystem rooted at `root`."""

    def __init__(
        self,
        root: Path,
        spec: NodeSpec,
        *,
        clock: Clock | None = None,
        device_profiles: list[profiles.Profile] | None = None,
    ) -> None:
        self.root = Path(root)
        self.spec = spec
        self._clock = clock or SystemClock()
        self.node = NodeModel(spec, start=self._clock.time(), device_profiles=device_profiles)
        self._faults: dict[str, str] = {}
        self._written: dict[Path, bytes] = {}  # what update_gpus last wrote to each file

    def build(self) -> HostTree:
        if self.spec.vendor == "amd":
            dri.write_bmc(self.root)
            for gpu in self.node.gpus:
                amdgpu.write_static(
                    self.root,
                    gpu,
                    compute_partition=self.spec.compute_partition,
                    memory_partition=self.spec.memory_partition,
                )
                dri.write_gpu(self.root, gpu)
            dri.write_kfd(self.root, self.node.gpus)
            files.write(self.root / "sys/module/amdgpu/version", f"{AMD_DRIVER_VERSION}\n")
        else:
            self._write_nvidia()
        for nic in self.node.nics:
            infiniband.write_static(self.root, nic)
        self._write_tools()
        self.update()
        return self

    def _write_nvidia(self) -> None:
        for gpu in self.node.gpus:
            pci = self.root / amdgpu.PCI_ROOT / gpu.bdf
            files.write(pci / "vendor", "0x10de\n")
            files.write(pci / "device", f"{gpu.model.device_id}\n")
            files.write(pci / "numa_node", f"{gpu.numa_node}\n")
            files.write(pci / "class", "0x030200\n")
            files.write(pci / "uevent", f"DRIVER=nvidia\nPCI_SLOT_NAME={gpu.bdf}\n")
            files.link(self.root / "sys/bus/pci/devices" / gpu.bdf, pci)
            files.device_node(self.root / "dev" / f"nvidia{gpu.index}")
        for name in ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"):
            files.device_node(self.root / "dev" / name)

    def _write_tools(self) -> None:
        tools = TOOL_PATHS if self.spec.vendor == "amd" else {"rdma": TOOL_PATHS["rdma"]}
        for tool, relative in tools.items():
            script = (
                f"#!{sys.executable}\n"
                "import sys\n"
                "from lens.sim.hosts import tooling\n"
                f"sys.exit(tooling.main({tool!r}, sys.argv[1:], {str(self.root)!r}))\n"
            )
            path = self.root / relative
            files.write(path, script)
            path.chmod(0o755)

    def tool(self, name: str) -> Path:
        """Where the stand-in for `name` (amd-smi, rocm-smi, rdma) lives."""
        return self.root / TOOL_PATHS[name]

    def update(self) -> None:
        """Advance the readings to now and rewrite every file that changes."""
        self._written.clear()
        now = self._clock.time()
        self.node.advance(now)
        if self.spec.vendor == "amd":
            for gpu, reading in zip(self.node.gpus, self.node.gpu_readings, strict=True):
                amdgpu.write_readings(
                    self.root, gpu, reading, now=now, num_partition=len(gpu.partitions) + 1
                )
        for nic, port in zip(self.node.nics, self.node.port_readings, strict=True):
            infiniband.write_readings(self.root, nic, port)
        files.write(self.root / tooling.STATE_FILE, json.dumps(self.state(), default=str))

    def update_gpus(self) -> None:
        """Advance the readings to now and rewrite those of the AMD GPUs' files whose value
        changed since the last call — the NICs' files and the tools' state stay as last
        written: for a replayed cluster of many nodes whose agents read only the GPUs."""
        now = self._clock.time()
        self.node.advance(now)
        if self.spec.vendor == "amd":
            for gpu, reading in zip(self.node.gpus, self.node.gpu_readings, strict=True):
                amdgpu.write_readings(
                    self.root,
                    gpu,
                    reading,
                    now=now,
                    num_partition=len(gpu.partitions) + 1,
                    write=self._write_changed,
                )

    def _write_changed(self, path: Path, content: str | bytes) -> None:
        data = content.encode() if isinstance(content, str) else content
        if self._written.get(path) != data:
            files.write(path, content)
            self._written[path] = data

    def state(self) -> dict[str, Any]:
        """Everything the tree shows, as plain data (the tool stand-ins read it)."""
        gpus = [
            {**dataclasses.asdict(gpu), "reading": dataclasses.asdict(reading)}
            for gpu, reading in zip(self.node.gpus, self.node.gpu_readings, strict=True)
        ]
        nics = [
            {**dataclasses.asdict(nic), "reading": dataclasses.asdict(port)}
            for nic, port in zip(self.node.nics, self.node.port_readings, strict=True)
        ]
        return {
            "node": self.spec.name,
            "vendor": self.spec.vendor,
            "time": self.node.now,
            "driver_version": AMD_DRIVER_VERSION,
            "compute_partition": self.spec.compute_partition,
            "memory_partition": self.spec.memory_partition,
            "amd_smi_layout": self.spec.amd_smi_layout,
            "gpus": gpus,
            "nics": nics,
            "faults": dict(self._faults),
        }

    # -- faults ----------------------------------------------------------------------------

    def break_tool(self, name: str, how: str | None) -> None:
        """Make a tool stand-in `fail`, print `garbage`, `hang`, print a `banner` first, or heal."""
        if how is None:
            self._faults.pop(name, None)
        else:
            self._faults[name] = how
        files.write(self.root / tooling.STATE_FILE, json.dumps(self.state(), default=str))

    def tool_prints(self, name: str, output: str | bytes) -> None:
        """Make a tool stand-in print exactly `output` (and exit 0), whatever it is asked."""
        files.replace(
            self.root / tooling.output_file(name),
            output.encode() if isinstance(output, str) else output,
        )
        self.break_tool(name, "print")

    def set_port_down(self, index: int, down: bool = True) -> None:
        """Take NIC `index`'s link down (or up again), as a pulled cable does."""
        if down:
            self.node.ports_down.add(index)
        else:
            self.node.ports_down.discard(index)
        self.update()

    def unplug_gpu(self, index: int) -> None:
        """Make AMD GPU `index` vanish from the bus, as a GPU that fell off it does: its PCI
        device, DRM nodes and driver binding disappear; the tools still list it (they cache)."""
        gpu = self.node.gpus[index]
        for relative in (
            f"sys/bus/pci/devices/{gpu.bdf}",
            f"sys/module/amdgpu/drivers/pci:amdgpu/{gpu.bdf}",
            f"sys/class/drm/card{gpu.card}",
            f"sys/class/drm/renderD{gpu.render_minor}",
        ):
            (self.root / relative).unlink(missing_ok=True)

    def set_serial(self, index: int, serial: str) -> None:
        """Give AMD GPU `index` a new serial number everywhere it shows (sysfs and the tools),
        as a board swapped in the same slot does."""
        gpus = list(self.node.gpus)
        gpus[index] = dataclasses.replace(gpus[index], serial=serial)
        self.node.gpus = tuple(gpus)
        files.write(
            self.root / f"sys/class/drm/card{gpus[index].card}/device/serial_number", f"{serial}\n"
        )
        files.write(self.root / tooling.STATE_FILE, json.dumps(self.state(), default=str))

    def remove(self, relative: str) -> None:
        """Delete a file of the tree, as a driver that hides an attribute does."""
        self._written.clear()  # update_gpus writes every file again
        (self.root / relative).unlink()

    def corrupt(self, relative: str, content: str | bytes) -> None:
        """Make a file say exactly `content`, as a misbehaving driver would."""
        self._written.clear()  # update_gpus writes every file again
        files.overwrite(self.root / relative, content)

    def nvml(self) -> nvml.FakeNvml:
        """The NVML stand-in for this node's NVIDIA GPUs."""
        if self.spec.vendor != "nvidia":
            raise ValueError(f"{self.spec.name} has {self.spec.model} GPUs, not NVIDIA ones")
        return nvml.FakeNvml(self.node)
