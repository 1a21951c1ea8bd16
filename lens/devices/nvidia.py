"""The NVIDIA collector: NVML (through nvml.py) into the same GpuSnapshot model as AMD's.

Identities (UUID, name, serial, PCI address) are read once per GPU and kept; readings are read
every cycle. A GPU that fell off the bus is left out and named in the problems; a failed NVML
session is re-initialised on the next cycle. NUMA nodes come from sysfs under the host root.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from lens.devices.gpu import GpuCollection, GpuSnapshot, GpuStatic, ThrottleReading
from lens.devices.nvml import Nvml, NvmlIdentity, NvmlReadings
from lens.devices.sysfs import HostFiles, parse_int
from lens.runtime import errors

log = logging.getLogger(__name__)


class NvidiaGpuCollector:
    name: ClassVar[str] = "nvidia"

    def __init__(self, nvml: Nvml, host: HostFiles) -> None:
        self._nvml = nvml
        self._host = host
        self._identities: dict[int, NvmlIdentity] = {}
        self._driver: str | None = None

    def collect(self) -> GpuCollection:
        try:
            self._nvml.open()
            count = self._nvml.count()
            if self._driver is None:
                self._driver = self._nvml.driver_version()
        except errors.SourceError:
            self._nvml.reset()
            self._identities.clear()
            raise
        if count == 0:
            raise errors.NoDataError("NVML lists no NVIDIA GPUs")
        problems: list[str] = []
        gpus = []
        for index in range(count):
            try:
                gpus.append(self._read(index, problems))
            except errors.DeviceUnavailableError as exc:
                self._identities.pop(index, None)
                problems.append(f"GPU {index}: {exc}")
        if not gpus:
            raise errors.DeviceUnavailableError("; ".join(problems))
        return GpuCollection(tuple(gpus), tuple(problems))

    def _read(self, index: int, problems: list[str]) -> GpuSnapshot:
        handle = self._nvml.handle(index)
        identity = self._identities.get(index)
        if identity is None:
            identity = self._identities[index] = self._nvml.identity(index, handle)
        readings = self._nvml.readings(handle, problems)
        return self._snapshot(identity, readings)

    def _snapshot(self, identity: NvmlIdentity, readings: NvmlReadings) -> GpuSnapshot:
        numa = parse_int(
            self._host.read_text(f"/sys/bus/pci/devices/{identity.pci_bus_id}/numa_node")
        )
        numa_node = numa if numa is not None and numa >= 0 else None
        temperature = readings.temperature_celsius
        return GpuSnapshot(
            vendor="nvidia",
            index=identity.index,
            pci_bus_id=identity.pci_bus_id,
            card=f"nvidia{identity.minor}" if identity.minor is not None else "",
            model=identity.name,
            serial=identity.serial,
            uuid=identity.uuid,
            utilization_ratio=readings.utilization_ratio,
            memory_activity_ratio=readings.memory_activity_ratio,
            memory_total_bytes=readings.memory_total_bytes,
            memory_used_bytes=readings.memory_used_bytes,
            power_watts=readings.power_watts,
            power_limit_watts=readings.power_limit_watts,
            energy_joules=readings.energy_joules,
            temperatures_celsius=() if temperature is None else (("gpu", temperature),),
            clocks_hertz=_clocks(readings),
            pcie_link_speed_gts=readings.pcie_link_speed_gts,
            pcie_link_width=readings.pcie_link_width,
            pcie_replays=readings.pcie_replays,
            ecc_errors=_ecc(readings),
            numa_node=numa_node,
            throttle=_throttle(readings.clocks_event_reasons),
            static=GpuStatic(
                pci_bus_id=identity.pci_bus_id,
                market_name=identity.name,
                serial=identity.serial or None,
                driver_version=self._driver,
                numa_node=numa_node,
                vram_bytes=readings.memory_total_bytes,
                source="nvml",
            ),
        )

    def driver_version(self) -> str | None:
        """The NVIDIA driver's version, once NVML answered."""
        return self._driver


def _clocks(readings: NvmlReadings) -> tuple[tuple[str, float], ...]:
    pairs = (("sclk", readings.sm_clock_hertz), ("mclk", readings.memory_clock_hertz))
    return tuple((domain, value) for domain, value in pairs if value is not None)


# nvmlClocksEventReason* bits (nvml.h) and the throttler Lens names each; idle, application
# clocks, sync boost and display clocks hold no clock back for a fault and are left out.
_CLOCKS_EVENT_BITS = (
    (0x4, "power"),  # SwPowerCap
    (0x8, "hw_slowdown"),  # HwSlowdown: the board asserted a slowdown
    (0x20, "thermal"),  # SwThermalSlowdown
    (0x40, "thermal"),  # HwThermalSlowdown
    (0x80, "power_brake"),  # HwPowerBrakeSlowdown: the power supply asked
)


def _throttle(reasons: int | None) -> ThrottleReading | None:
    if reasons is None:
        return None
    active = dict.fromkeys(name for bit, name in _CLOCKS_EVENT_BITS if reasons & bit)
    return ThrottleReading(active=tuple(active))


def _ecc(readings: NvmlReadings) -> tuple[tuple[str, str, int], ...]:
    pairs = (
        ("correctable", readings.ecc_correctable),
        ("uncorrectable", readings.ecc_uncorrectable),
    )
    return tuple(("device_memory", kind, count) for kind, count in pairs if count is not None)
