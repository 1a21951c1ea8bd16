from __future__ import annotations

from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts import nvml
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree


@pytest.fixture
def fake(tmp_path: Path) -> nvml.FakeNvml:
    tree = HostTree(tmp_path, NodeSpec(model="H100", gpus=2, rdma=0), clock=FakeClock()).build()
    binding = tree.nvml()
    binding.nvmlInit()
    return binding


def test_nvml_units_and_identities(fake: nvml.FakeNvml, tmp_path: Path) -> None:
    handle = fake.nvmlDeviceGetHandleByIndex(1)
    assert fake.nvmlDeviceGetName(handle) == "NVIDIA H100 80GB HBM3"
    assert fake.nvmlDeviceGetUUID(handle).startswith("GPU-")
    pci = fake.nvmlDeviceGetPciInfo_v3(handle)
    assert pci.busId == "00000000:26:00.0" and pci.busIdLegacy == "0000:26:00.0"
    power = fake.nvmlDeviceGetPowerUsage(handle)
    assert 70_000 <= power <= 700_000  # milliwatts
    memory = fake.nvmlDeviceGetMemoryInfo(handle)
    assert memory.total == 80 * 1024**3 and memory.used + memory.free == memory.total
    assert fake.nvmlDeviceGetTotalEnergyConsumption(handle) >= 0
    assert 0 <= fake.nvmlDeviceGetUtilizationRates(handle).gpu <= 100
    assert fake.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU) > 30
    assert fake.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM) in (900, 2619)
    assert fake.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM) == 1980
    assert fake.nvmlDeviceGetCurrPcieLinkGeneration(handle) == 5
    assert (
        fake.nvmlDeviceGetTotalEccErrors(
            handle, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC
        )
        == 0
    )
    assert fake.nvmlDeviceGetMigMode(handle) == (0, 0)
    assert fake.nvmlSystemGetDriverVersion() == "550.54.15"


def test_nvml_errors(fake: nvml.FakeNvml) -> None:
    with pytest.raises(fake.NVMLError) as invalid:
        fake.nvmlDeviceGetHandleByIndex(9)
    assert invalid.value.value == nvml.NVML_ERROR_INVALID_ARGUMENT
    handle = fake.nvmlDeviceGetHandleByIndex(0)
    fake.fail("nvmlDeviceGetPowerUsage", nvml.NVML_ERROR_NOT_SUPPORTED)
    with pytest.raises(nvml.NVMLError) as unsupported:
        fake.nvmlDeviceGetPowerUsage(handle)
    assert unsupported.value.value == nvml.NVML_ERROR_NOT_SUPPORTED
    fake.lose(0)
    with pytest.raises(nvml.NVMLError) as lost:
        fake.nvmlDeviceGetName(handle)
    assert lost.value.value == nvml.NVML_ERROR_GPU_IS_LOST
    fake.heal()
    assert fake.nvmlDeviceGetName(handle)
    fake.nvmlShutdown()
    with pytest.raises(nvml.NVMLError):
        fake.nvmlDeviceGetCount()
