"""Static facts of AMD GPUs, refreshed out of the cycle: amd-smi, then rocm-smi, then sysfs.

`StaticFactsSource.refresh()` runs at start and every few minutes (the node agent's `statics`
loop); the AMD collector and the REST inventory read `current()`. A failing tool never empties
the inventory: the last good tool facts stay, with the time they were read, and sysfs (read on
every refresh) fills what they lack. amdsmi.py parses the tools, tools.py runs them.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping

from lens.devices import amdgpu, amdsmi
from lens.devices.gpu import GpuStatic
from lens.devices.sysfs import HostFiles, parse_int
from lens.devices.tools import Runner
from lens.runtime import errors

log = logging.getLogger(__name__)

AMD_SMI_STATIC = ("static", "--json")
ROCM_SMI_CARDS = ("--showproductname", "--showserial", "--showbus", "--json")
ROCM_SMI_DRIVER = ("--showdriverversion", "--json")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StaticInventory:
    """What is known about the node's AMD GPUs and where it came from."""

    facts: Mapping[str, GpuStatic]
    driver_version: str | None
    source: str  # amd-smi, rocm-smi, sysfs or none: the richest source in `facts`
    tool_read_at: float | None  # wall time the tool facts in `facts` were read
    refreshed_at: float | None  # wall time of the last refresh (sysfs is re-read every time)
    problems: tuple[str, ...] = ()  # why richer sources were not used on the last refresh


EMPTY = StaticInventory(
    facts={}, driver_version=None, source="none", tool_read_at=None, refreshed_at=None
)


def merge(primary: GpuStatic, fallback: GpuStatic) -> GpuStatic:
    """`primary`'s facts, with each unknown one taken from `fallback`."""
    values = {
        field.name: getattr(fallback, field.name)
        if getattr(primary, field.name) is None
        else getattr(primary, field.name)
        for field in dataclasses.fields(GpuStatic)
    }
    values["source"] = primary.source
    return GpuStatic(**values)


def read_sysfs_facts(host: HostFiles) -> dict[str, GpuStatic]:
    """What amdgpu sysfs tells about each card: name, serial, VBIOS, partitions, NUMA, VRAM."""
    facts = {}
    for _card, device, bdf in amdgpu.find_cards(host):

        def read(name: str, device: str = device) -> str | None:
            return host.read_text(f"{device}/{name}") or None

        numa = parse_int(read("numa_node"))
        facts[bdf] = GpuStatic(
            pci_bus_id=bdf,
            market_name=read("product_name"),
            serial=read("serial_number"),
            vbios=read("vbios_version"),
            device_id=read("device"),
            compute_partition=read("current_compute_partition"),
            memory_partition=read("current_memory_partition"),
            numa_node=numa if numa is not None and numa >= 0 else None,
            vram_bytes=parse_int(read("mem_info_vram_total")),
        )
    return facts


def read_driver_version(host: HostFiles) -> str | None:
    """The amdgpu module's version; the kernel's release when the driver is the in-tree one."""
    return host.read_text("/sys/module/amdgpu/version") or host.read_text(
        "/proc/sys/kernel/osrelease"
    )


class StaticFactsSource:
    """Reads and keeps the static facts; the cycle and REST may read while it refreshes."""

    def __init__(
        self,
        host: HostFiles,
        runner: Runner,
        *,
        amd_smi: str,
        rocm_smi: str,
        wall_time: Callable[[], float],
    ) -> None:
        self._host = host
        self._runner = runner
        self._amd_smi = amd_smi
        self._rocm_smi = rocm_smi
        self._time = wall_time
        self._lock = threading.Lock()
        self._current = EMPTY
        self._tool_facts: dict[str, GpuStatic] = {}
        self._tool_driver: str | None = None
        self._tool_source = "none"
        self._tool_read_at: float | None = None
        self._failing: str | None = None

    def current(self) -> StaticInventory:
        with self._lock:
            return self._current

    def facts(self) -> dict[str, GpuStatic]:
        """Facts by PCI address (the AMD collector's StaticFacts)."""
        return dict(self.current().facts)

    def refresh(self) -> StaticInventory:
        """Read the tools and sysfs now; keep the last good tool facts when the tools fail."""
        problems: list[str] = []
        sysfs = read_sysfs_facts(self._host)
        if sysfs:
            self._read_tools(problems)
        inventory = self._combine(sysfs, problems)
        with self._lock:
            self._current = inventory
        self._log_transition(problems)
        return inventory

    def _read_tools(self, problems: list[str]) -> None:
        try:
            facts = amdsmi.parse_amd_smi_static(self._runner.run((self._amd_smi, *AMD_SMI_STATIC)))
        except errors.SourceError as exc:
            problems.append(f"amd-smi: {exc}")
            if self._tool_source == "amd-smi":
                return  # the last good amd-smi facts are richer than rocm-smi's
        else:
            driver = next((f.driver_version for f in facts.values() if f.driver_version), None)
            self._keep(facts, driver, "amd-smi")
            return
        try:
            facts = amdsmi.parse_rocm_smi_cards(self._runner.run((self._rocm_smi, *ROCM_SMI_CARDS)))
            driver = amdsmi.parse_rocm_smi_driver(
                self._runner.run((self._rocm_smi, *ROCM_SMI_DRIVER))
            )
        except errors.SourceError as exc:
            problems.append(f"rocm-smi: {exc}")
        else:
            self._keep(facts, driver, "rocm-smi")

    def _keep(self, facts: dict[str, GpuStatic], driver: str | None, source: str) -> None:
        self._tool_facts, self._tool_driver = facts, driver
        self._tool_source, self._tool_read_at = source, self._time()

    def _combine(self, sysfs: dict[str, GpuStatic], problems: list[str]) -> StaticInventory:
        facts = {}
        for bdf, from_sysfs in sysfs.items():
            tool = self._tool_facts.get(bdf)
            if tool is None:
                facts[bdf] = from_sysfs
                continue
            # Partition mode and VRAM size are live in sysfs; amd-smi reports a partition's share.
            live = dataclasses.replace(
                tool,
                compute_partition=from_sysfs.compute_partition or tool.compute_partition,
                memory_partition=from_sysfs.memory_partition or tool.memory_partition,
                vram_bytes=from_sysfs.vram_bytes or tool.vram_bytes,
            )
            facts[bdf] = merge(live, from_sysfs)
        used_tool = any(bdf in self._tool_facts for bdf in sysfs)
        driver = self._tool_driver if used_tool else None
        return StaticInventory(
            facts=facts,
            driver_version=driver or (read_driver_version(self._host) if sysfs else None),
            source=self._tool_source if used_tool else ("sysfs" if sysfs else "none"),
            tool_read_at=self._tool_read_at if used_tool else None,
            refreshed_at=self._time(),
            problems=tuple(problems),
        )

    def _log_transition(self, problems: list[str]) -> None:
        failing = "; ".join(problems) or None
        if failing and failing != self._failing:
            log.warning("static GPU facts degraded", extra={"problems": failing})
        elif self._failing and not failing:
            log.info("static GPU facts recovered")
        self._failing = failing
