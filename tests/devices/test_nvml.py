"""The NVML boundary converts units and bus ids and turns NVMLErrors into Lens errors."""

from __future__ import annotations

import pytest

from lens.devices import nvml
from lens.devices.nvml import Nvml
from lens.runtime import errors
from lens.sim.hosts import nvml as fake
from lens.sim.hosts.tree import HostTree


def test_bus_ids_take_the_sysfs_spelling() -> None:
    assert nvml.normalize_bus_id("00000000:3B:00.0") == "0000:3b:00.0"
    assert nvml.normalize_bus_id(b"0000:3B:00.0") == "0000:3b:00.0"
    assert nvml.normalize_bus_id("00000001:C1:00.0\n") == "0001:c1:00.0"


def test_the_real_binding_loads_without_a_gpu() -> None:
    binding = nvml.load_binding()
    assert hasattr(binding, "nvmlInit") and issubclass(binding.NVMLError, Exception)


def test_identity_and_readings_in_base_units(h100: HostTree) -> None:
    session = Nvml(h100.nvml())
    session.open()
    assert session.count() == 2 and session.driver_version() == "550.54.15"
    handle = session.handle(1)
    identity = session.identity(1, handle)
    gpu, reading = h100.node.gpus[1], h100.node.gpu_readings[1]
    assert (identity.uuid, identity.pci_bus_id, identity.minor) == (gpu.uuid, gpu.bdf, 1)
    assert identity.name == "NVIDIA H100 80GB HBM3"
    problems: list[str] = []
    readings = session.readings(handle, problems)
    assert problems == []
    assert readings.utilization_ratio == pytest.approx(reading.utilization / 100)
    assert readings.power_watts == pytest.approx(reading.power_w, abs=0.001)
    assert readings.power_limit_watts == 700
    assert readings.energy_joules == pytest.approx(reading.energy_j, abs=0.001)
    assert readings.sm_clock_hertz == reading.sclk_mhz * 1e6
    assert readings.memory_total_bytes == gpu.model.vram_bytes
    assert readings.pcie_link_speed_gts == 32.0 and readings.pcie_link_width == 16
    assert readings.ecc_uncorrectable == 0
    session.close()


def test_unsupported_readings_are_none_other_failures_are_problems(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.fail("nvmlDeviceGetPowerUsage", fake.NVML_ERROR_NOT_SUPPORTED)
    binding.fail("nvmlDeviceGetTemperature", fake.NVML_ERROR_UNKNOWN)
    session = Nvml(binding)
    session.open()
    problems: list[str] = []
    readings = session.readings(session.handle(0), problems)
    assert readings.power_watts is None and readings.temperature_celsius is None
    assert problems == ["NVML temperature: NVML error 999"]


def test_a_lost_gpu_is_unavailable(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.lose(0)
    session = Nvml(binding)
    session.open()
    with pytest.raises(errors.DeviceUnavailableError, match="GPU is lost"):
        session.readings(session.handle(0), [])
    with pytest.raises(errors.DeviceUnavailableError, match="GPU 0 PCI info: GPU is lost"):
        session.identity(0, session.handle(0))


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (nvml.ERROR_DRIVER_NOT_LOADED, errors.NoDataError),
        (nvml.ERROR_LIBRARY_NOT_FOUND, errors.NoDataError),
        (nvml.ERROR_NO_PERMISSION, errors.SourceError),
    ],
)
def test_init_failures(h100: HostTree, code: int, kind: type[Exception]) -> None:
    binding = h100.nvml()
    binding.fail("nvmlInit", code)
    with pytest.raises(kind, match="NVML: init"):
        Nvml(binding).open()


def test_reset_makes_the_next_open_initialise_again(h100: HostTree) -> None:
    binding = h100.nvml()
    session = Nvml(binding)
    session.open()
    binding.nvmlShutdown()  # the driver went away under us
    with pytest.raises(errors.SourceError):
        session.count()
    session.reset()
    session.open()
    assert session.count() == 2
