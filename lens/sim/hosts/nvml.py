"""A stand-in for the NVML binding (pynvml / nvidia-ml-py) over a simulated NVIDIA node.

It offers the functions, constants and NVMLError of nvidia-ml-py that Lens calls, with NVML's
units (shared/formats/nvidia.md: power in milliwatts, energy in millijoules, memory in bytes,
clocks in MHz, PCI bus id "00000000:3B:00.0"). Production code receives the binding as an
object, so tests hand it this instead of the real module. `fail()` and `lose()` inject errors.
"""

from __future__ import annotations

import dataclasses

from lens.sim.hosts.state import NodeModel

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_UNKNOWN = 999

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_GRAPHICS = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_CLOCK_VIDEO = 3
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1


class NVMLError(Exception):
    """As in nvidia-ml-py: `.value` is the NVML return code."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


@dataclasses.dataclass(frozen=True, slots=True)
class Handle:
    index: int


@dataclasses.dataclass(frozen=True, slots=True)
class Utilization:
    gpu: int
    memory: int


@dataclasses.dataclass(frozen=True, slots=True)
class Memory:
    total: int
    free: int
    used: int


@dataclasses.dataclass(frozen=True, slots=True)
class PciInfo:
    # nvidia-ml-py's field names
    busId: str
    busIdLegacy: str
    domain: int
    bus: int
    device: int
    pciDeviceId: int


class FakeNvml:
    """The nvidia-ml-py surface Lens uses, answering from a NodeModel of NVIDIA GPUs."""

    NVMLError = NVMLError

    def __init__(self, node: NodeModel, *, driver_version: str = "550.54.15") -> None:
        self._node = node
        self._driver = driver_version
        self._initialised = False
        self._failures: dict[str, int] = {}
        self._lost: set[int] = set()

    def fail(self, function: str, code: int = NVML_ERROR_UNKNOWN) -> None:
        """Make `function` raise NVMLError(code) from now on (until `heal`)."""
        self._failures[function] = code

    def lose(self, index: int) -> None:
        """The GPU fell off the bus: every call on its handle raises GPU_IS_LOST."""
        self._lost.add(index)

    def heal(self) -> None:
        self._failures.clear()
        self._lost.clear()

    def _check(self, function: str, handle: Handle | None = None) -> None:
        if not self._initialised:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        if function in self._failures:
            raise NVMLError(self._failures[function])
        if handle is not None and handle.index in self._lost:
            raise NVMLError(NVML_ERROR_GPU_IS_LOST)

    def nvmlInit(self) -> None:
        if "nvmlInit" in self._failures:
            raise NVMLError(self._failures["nvmlInit"])
        self._initialised = True

    def nvmlShutdown(self) -> None:
        self._initialised = False

    def nvmlSystemGetDriverVersion(self) -> str:
        self._check("nvmlSystemGetDriverVersion")
        return self._driver

    def nvmlDeviceGetCount(self) -> int:
        self._check("nvmlDeviceGetCount")
        return len(self._node.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Handle:
        self._check("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self._node.gpus):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return Handle(index)

    def nvmlDeviceGetUUID(self, handle: Handle) -> str:
        self._check("nvmlDeviceGetUUID", handle)
        return self._node.gpus[handle.index].uuid

    def nvmlDeviceGetName(self, handle: Handle) -> str:
        self._check("nvmlDeviceGetName", handle)
        return self._node.gpus[handle.index].model.market_name

    def nvmlDeviceGetSerial(self, handle: Handle) -> str:
        self._check("nvmlDeviceGetSerial", handle)
        return str(int(self._node.gpus[handle.index].serial, 16))

    def nvmlDeviceGetMinorNumber(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetMinorNumber", handle)
        return handle.index

    def nvmlDeviceGetPciInfo_v3(self, handle: Handle) -> PciInfo:
        self._check("nvmlDeviceGetPciInfo_v3", handle)
        bdf = self._node.gpus[handle.index].bdf
        domain, bus, device = int(bdf[:4], 16), int(bdf[5:7], 16), int(bdf[8:10], 16)
        device_id = int(self._node.gpus[handle.index].model.device_id, 16)
        return PciInfo(
            busId=f"{domain:08X}:{bus:02X}:{device:02X}.0",
            busIdLegacy=f"{domain:04X}:{bus:02X}:{device:02X}.0",
            domain=domain,
            bus=bus,
            device=device,
            pciDeviceId=(device_id << 16) | 0x10DE,
        )

    def nvmlDeviceGetUtilizationRates(self, handle: Handle) -> Utilization:
        self._check("nvmlDeviceGetUtilizationRates", handle)
        reading = self._node.gpu_readings[handle.index]
        return Utilization(gpu=int(reading.utilization), memory=int(reading.memory_activity))

    def nvmlDeviceGetMemoryInfo(self, handle: Handle) -> Memory:
        self._check("nvmlDeviceGetMemoryInfo", handle)
        total = self._node.gpus[handle.index].model.vram_bytes
        used = self._node.gpu_readings[handle.index].vram_used_bytes
        return Memory(total=total, free=total - used, used=used)

    def nvmlDeviceGetPowerUsage(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetPowerUsage", handle)
        return int(self._node.gpu_readings[handle.index].power_w * 1000)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetEnforcedPowerLimit", handle)
        return int(self._node.gpus[handle.index].model.max_power_w * 1000)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetTotalEnergyConsumption", handle)
        return int(self._node.gpu_readings[handle.index].energy_j * 1000)

    def nvmlDeviceGetTemperature(self, handle: Handle, sensor: int) -> int:
        self._check("nvmlDeviceGetTemperature", handle)
        if sensor != NVML_TEMPERATURE_GPU:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return int(self._node.gpu_readings[handle.index].temp_junction_c)

    def nvmlDeviceGetClockInfo(self, handle: Handle, clock: int) -> int:
        self._check("nvmlDeviceGetClockInfo", handle)
        reading = self._node.gpu_readings[handle.index]
        return int(reading.mclk_mhz if clock == NVML_CLOCK_MEM else reading.sclk_mhz)

    def nvmlDeviceGetMaxClockInfo(self, handle: Handle, clock: int) -> int:
        self._check("nvmlDeviceGetMaxClockInfo", handle)
        model = self._node.gpus[handle.index].model
        return model.mclk_mhz if clock == NVML_CLOCK_MEM else model.peak_sclk_mhz

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetCurrPcieLinkGeneration", handle)
        return 5 if self._node.gpus[handle.index].model.pcie_speed_gts >= 32 else 4

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetCurrPcieLinkWidth", handle)
        return self._node.gpus[handle.index].model.pcie_width

    def nvmlDeviceGetPcieReplayCounter(self, handle: Handle) -> int:
        self._check("nvmlDeviceGetPcieReplayCounter", handle)
        return self._node.gpu_readings[handle.index].pcie_replay

    def nvmlDeviceGetTotalEccErrors(
        self, handle: Handle, error_type: int, counter_type: int
    ) -> int:
        self._check("nvmlDeviceGetTotalEccErrors", handle)
        reading = self._node.gpu_readings[handle.index]
        if error_type == NVML_MEMORY_ERROR_TYPE_CORRECTED:
            return reading.ecc_correctable
        return reading.ecc_uncorrectable

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: Handle) -> int:
        """The GPU's throttling (NodeModel.throttle) as nvmlClocksEventReason bits: power as
        SwPowerCap, any thermal throttler as HwThermalSlowdown, prochot as HwSlowdown."""
        self._check("nvmlDeviceGetCurrentClocksThrottleReasons", handle)
        throttling = self._node.faults[handle.index].throttling
        bits = 0x4 if "power" in throttling else 0
        bits |= 0x8 if "prochot" in throttling else 0
        bits |= 0x40 if throttling & {"thermal_socket", "thermal_vr", "thermal_hbm"} else 0
        return bits

    def nvmlDeviceGetMigMode(self, handle: Handle) -> tuple[int, int]:
        self._check("nvmlDeviceGetMigMode", handle)
        return (0, 0)
