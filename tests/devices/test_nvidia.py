"""The NVIDIA collector: a 2 x H100 node through the NVML stand-in, in the shared data model."""

from __future__ import annotations

import pytest

from lens.devices import gpu
from lens.devices.gpu import ThrottleReading
from lens.devices.health import HealthTracker
from lens.devices.nvidia import NvidiaGpuCollector
from lens.devices.nvml import Nvml
from lens.devices.sysfs import HostFiles
from lens.runtime import errors
from lens.runtime.textformat import SnapshotFamilies
from lens.sim.hosts import nvml as fake
from lens.sim.hosts.tree import HostTree


def _collector(tree: HostTree, binding: fake.FakeNvml | None = None) -> NvidiaGpuCollector:
    return NvidiaGpuCollector(Nvml(binding or tree.nvml()), HostFiles(tree.root))


def test_two_h100(h100: HostTree) -> None:
    collector = _collector(h100)
    collection = collector.collect()
    assert collection.problems == ()
    assert collector.driver_version() == "550.54.15"
    for snapshot, identity, reading in zip(
        collection.gpus, h100.node.gpus, h100.node.gpu_readings, strict=True
    ):
        assert snapshot.vendor == "nvidia" and snapshot.index == identity.index
        assert snapshot.pci_bus_id == identity.bdf and snapshot.uuid == identity.uuid
        assert snapshot.card == f"nvidia{identity.index}"
        assert snapshot.model == "NVIDIA H100 80GB HBM3"
        assert snapshot.utilization_ratio == pytest.approx(reading.utilization / 100)
        assert snapshot.numa_node == identity.numa_node, "from sysfs under the host root"
        assert dict(snapshot.temperatures_celsius)["gpu"] == int(reading.temp_junction_c)
        assert ("device_memory", "correctable", reading.ecc_correctable) in snapshot.ecc_errors
        assert snapshot.static is not None and snapshot.static.driver_version == "550.54.15"


def test_renders_as_the_golden_file(h100: HostTree, golden) -> None:
    sources = []
    for group in (gpu.FAMILIES, gpu.COMPAT_FAMILIES):
        source = SnapshotFamilies(group)
        source.update(_collector(h100).collect().gpus)
        sources.append(source)
    golden("h100.prom", "".join(source.render_text() for source in sources))


def test_a_lost_gpu_is_left_out_and_named(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.lose(1)
    collection = _collector(h100, binding).collect()
    assert [g.index for g in collection.gpus] == [0]
    assert collection.problems == ("GPU 1: NVML: GPU 1 PCI info: GPU is lost",)


def test_every_gpu_lost_fails_the_collection(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.lose(0)
    binding.lose(1)
    with pytest.raises(errors.DeviceUnavailableError, match=r"GPU 0.*GPU 1"):
        _collector(h100, binding).collect()


def test_no_driver_is_no_data_and_recovery_reinitialises(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.fail("nvmlInit", fake.NVML_ERROR_DRIVER_NOT_LOADED)
    collector = _collector(h100, binding)
    with pytest.raises(errors.NoDataError):
        collector.collect()
    binding.heal()
    assert len(collector.collect().gpus) == 2


def test_a_failing_session_is_reset(h100: HostTree) -> None:
    binding = h100.nvml()
    collector = _collector(h100, binding)
    collector.collect()
    binding.fail("nvmlDeviceGetCount", fake.NVML_ERROR_UNKNOWN)
    with pytest.raises(errors.SourceError, match="device count"):
        collector.collect()
    binding.heal()
    assert len(collector.collect().gpus) == 2


def test_clock_event_reasons_name_the_throttlers_and_judge_the_gpu(h100: HostTree) -> None:
    binding = h100.nvml()
    collector = _collector(h100, binding)
    assert [g.throttle for g in collector.collect().gpus] == [
        ThrottleReading(active=()),
        ThrottleReading(active=()),
    ]
    h100.node.throttle(1, frozenset({"thermal_hbm", "prochot", "power"}))
    tracker = HealthTracker(correctable_errors_per_hour=100)
    for at in (0.0, 30.0, 61.0):
        judged = tracker.assess(collector.collect().gpus, at)
    hot = judged[1]
    assert hot.throttle == ThrottleReading(active=("power", "hw_slowdown", "thermal"))
    assert hot.health is not None
    assert (hot.health.state, hot.health.reasons) == (
        "degraded",
        ("throttle_thermal", "throttle_prochot", "throttle_power"),
    )
    assert judged[0].health is not None and judged[0].health.state == "healthy"
    binding.fail("nvmlDeviceGetCurrentClocksThrottleReasons", fake.NVML_ERROR_NOT_SUPPORTED)
    assert [g.throttle for g in collector.collect().gpus] == [None, None]  # not told: unknown
