"""The NVML boundary: nvidia-ml-py (or its stand-in) in, typed values and Lens errors out.

Nothing above this module sees an NVMLError (STYLE S12.2). Units are converted here from NVML's
(shared/formats/nvidia.md: power in milliwatts, energy in millijoules, clocks in MHz) and the
PCI bus id is normalised to sysfs' spelling (`0000:3b:00.0`). nvidia.py builds GpuSnapshots
from what this returns. The binding is passed in, so tests hand over lens.sim's FakeNvml.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lens.runtime import errors

log = logging.getLogger(__name__)

T = TypeVar("T")

# NVML's stable C constants (nvml.h), so the binding's module attributes are not needed.
TEMPERATURE_GPU = 0
CLOCK_SM = 1
CLOCK_MEM = 2
MEMORY_ERROR_CORRECTED = 0
MEMORY_ERROR_UNCORRECTED = 1
VOLATILE_ECC = 0
ERROR_NOT_SUPPORTED = 3
ERROR_NO_PERMISSION = 4
ERROR_DRIVER_NOT_LOADED = 9
ERROR_LIBRARY_NOT_FOUND = 12
ERROR_FUNCTION_NOT_FOUND = 13
ERROR_GPU_IS_LOST = 15

PCIE_GT_PER_GENERATION = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}


def load_binding() -> Any:
    """The real nvidia-ml-py module (`pynvml`), imported only on nodes that use it."""
    try:
        import pynvml
    except ImportError as exc:
        raise errors.NoDataError("nvidia-ml-py is not installed") from exc
    return pynvml


def normalize_bus_id(bus_id: str | bytes) -> str:
    """NVML's `00000000:3B:00.0` -> sysfs' `0000:3b:00.0`."""
    text = bus_id.decode() if isinstance(bus_id, bytes) else bus_id
    domain, _, rest = text.strip().lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}"


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NvmlIdentity:
    index: int
    uuid: str
    name: str
    serial: str
    pci_bus_id: str
    minor: int | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NvmlReadings:
    """One GPU's readings in base units; None where NVML does not support the query."""

    utilization_ratio: float | None
    memory_activity_ratio: float | None
    memory_total_bytes: int | None
    memory_used_bytes: int | None
    power_watts: float | None
    power_limit_watts: float | None
    energy_joules: float | None
    temperature_celsius: float | None
    sm_clock_hertz: float | None
    memory_clock_hertz: float | None
    pcie_link_speed_gts: float | None
    pcie_link_width: int | None
    pcie_replays: int | None
    ecc_correctable: int | None
    ecc_uncorrectable: int | None
    clocks_event_reasons: int | None = None  # nvmlClocksEventReason* bits


class Nvml:
    """An NVML session over a binding; `problems` collects what one read could not get."""

    def __init__(self, binding: Any) -> None:
        self._binding = binding
        self._open = False

    def _error(self, exc: Exception, what: str) -> errors.SourceError:
        code = getattr(exc, "value", None)
        if code in (ERROR_LIBRARY_NOT_FOUND, ERROR_DRIVER_NOT_LOADED):
            return errors.NoDataError(f"NVML: {what}: {exc}")
        if code == ERROR_GPU_IS_LOST:
            return errors.DeviceUnavailableError(f"NVML: {what}: GPU is lost")
        return errors.SourceError(f"NVML: {what}: {exc}")

    def _call(self, what: str, function: Callable[..., T], *args: object) -> T:
        try:
            return function(*args)
        except self._binding.NVMLError as exc:
            raise self._error(exc, what) from exc

    def open(self) -> None:
        """nvmlInit once; NoDataError when there is no NVIDIA driver or library."""
        if not self._open:
            self._call("init", self._binding.nvmlInit)
            self._open = True

    def close(self) -> None:
        if self._open:
            self._open = False
            self._call("shutdown", self._binding.nvmlShutdown)

    def reset(self) -> None:
        """Forget the session after a failure, so the next open() initialises again."""
        self._open = False

    def driver_version(self) -> str:
        return _text(self._call("driver version", self._binding.nvmlSystemGetDriverVersion))

    def count(self) -> int:
        return int(self._call("device count", self._binding.nvmlDeviceGetCount))

    def handle(self, index: int) -> object:
        return self._call(f"GPU {index}", self._binding.nvmlDeviceGetHandleByIndex, index)

    def identity(self, index: int, handle: object) -> NvmlIdentity:
        binding = self._binding
        pci = self._call(f"GPU {index} PCI info", binding.nvmlDeviceGetPciInfo_v3, handle)
        problems: list[str] = []
        serial = self._optional(problems, "serial", binding.nvmlDeviceGetSerial, handle)
        minor = self._optional(problems, "minor number", binding.nvmlDeviceGetMinorNumber, handle)
        return NvmlIdentity(
            index=index,
            uuid=_text(self._call(f"GPU {index} UUID", binding.nvmlDeviceGetUUID, handle)),
            name=_text(self._call(f"GPU {index} name", binding.nvmlDeviceGetName, handle)),
            serial="" if serial is None else _text(serial),
            pci_bus_id=normalize_bus_id(pci.busId),
            minor=None if minor is None else int(minor),
        )

    def _optional(
        self, problems: list[str], what: str, function: Callable[..., T], *args: object
    ) -> T | None:
        """A reading NVML may not support on this GPU: None then, a problem on other errors."""
        try:
            return function(*args)
        except self._binding.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code == ERROR_GPU_IS_LOST:
                raise errors.DeviceUnavailableError(f"NVML: {what}: GPU is lost") from exc
            if code not in (ERROR_NOT_SUPPORTED, ERROR_FUNCTION_NOT_FOUND):
                problems.append(f"NVML {what}: {exc}")
            return None

    def readings(self, handle: object, problems: list[str]) -> NvmlReadings:
        """Every reading of one GPU; raises DeviceUnavailableError when the GPU is lost."""
        b = self._binding

        def get(what: str, function: Callable[..., T], *args: object) -> T | None:
            return self._optional(problems, what, function, handle, *args)

        rates = get("utilization", b.nvmlDeviceGetUtilizationRates)
        memory = get("memory", b.nvmlDeviceGetMemoryInfo)
        generation = get("PCIe generation", b.nvmlDeviceGetCurrPcieLinkGeneration)
        return NvmlReadings(
            utilization_ratio=None if rates is None else rates.gpu / 100,
            memory_activity_ratio=None if rates is None else rates.memory / 100,
            memory_total_bytes=None if memory is None else int(memory.total),
            memory_used_bytes=None if memory is None else int(memory.used),
            power_watts=_scaled(get("power", b.nvmlDeviceGetPowerUsage), 1000),
            power_limit_watts=_scaled(get("power limit", b.nvmlDeviceGetEnforcedPowerLimit), 1000),
            energy_joules=_scaled(get("energy", b.nvmlDeviceGetTotalEnergyConsumption), 1000),
            temperature_celsius=_scaled(
                get("temperature", b.nvmlDeviceGetTemperature, TEMPERATURE_GPU), 1
            ),
            sm_clock_hertz=_scaled(get("SM clock", b.nvmlDeviceGetClockInfo, CLOCK_SM), 1e-6),
            memory_clock_hertz=_scaled(
                get("memory clock", b.nvmlDeviceGetClockInfo, CLOCK_MEM), 1e-6
            ),
            pcie_link_speed_gts=None
            if generation is None
            else PCIE_GT_PER_GENERATION.get(int(generation)),
            pcie_link_width=get("PCIe width", b.nvmlDeviceGetCurrPcieLinkWidth),
            pcie_replays=get("PCIe replays", b.nvmlDeviceGetPcieReplayCounter),
            ecc_correctable=get(
                "ECC", b.nvmlDeviceGetTotalEccErrors, MEMORY_ERROR_CORRECTED, VOLATILE_ECC
            ),
            ecc_uncorrectable=get(
                "ECC", b.nvmlDeviceGetTotalEccErrors, MEMORY_ERROR_UNCORRECTED, VOLATILE_ECC
            ),
            # The older name of nvmlDeviceGetCurrentClocksEventReasons, in every binding.
            clocks_event_reasons=get(
                "clock event reasons", b.nvmlDeviceGetCurrentClocksThrottleReasons
            ),
        )


def _scaled(value: float | None, per: float) -> float | None:
    return None if value is None else value / per
