"""One data model for every GPU vendor, and the metric families rendered from it.

amdgpu.py (sysfs) and nvidia.py (NVML) produce GpuSnapshots; amdsmi.py and friends produce the
GpuStatic facts they carry. FAMILIES is the Lens set in base units; COMPAT_FAMILIES keeps the
original exporter's `gpu_utilization{gpu_id}` (a percentage) for dashboards built on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from lens.devices import healthrules
from lens.runtime.families import FamilyGroup, FamilySpec, Sample, one, spec

Vendor = Literal["amd", "nvidia"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuStatic:
    """Facts about a GPU that change rarely (read at start and every few minutes)."""

    pci_bus_id: str
    market_name: str | None = None
    serial: str | None = None
    vbios: str | None = None
    driver_version: str | None = None
    device_id: str | None = None
    gfx_version: str | None = None
    compute_partition: str | None = None
    memory_partition: str | None = None
    numa_node: int | None = None
    numa_affinity: int | None = None
    vram_type: str | None = None
    vram_bytes: int | None = None
    oam_id: int | None = None
    partition_count: int | None = None
    source: str = "sysfs"  # amd-smi, rocm-smi, sysfs or nvml


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ThrottleReading:
    """What a GPU says of its throttlers: those active now (AMD: gpu_metrics v1.4 and v1.5
    throttle_status bits; NVIDIA: NVML's clock event reasons; None where not reported), or how
    many accumulation periods each throttled in since the driver loaded (AMD gpu_metrics v1.6+
    residency counters) and how many periods there were."""

    active: tuple[str, ...] | None = None
    residency: tuple[tuple[str, int], ...] = ()
    accumulations: int | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuHealth:
    """A GPU's health as health.py judged it: its state, the reasons active, and the throttlers
    active over the last interval."""

    state: str
    reasons: tuple[str, ...] = ()
    throttled: tuple[str, ...] = ()

    def summary(self) -> str:
        """ "healthy", or the state and its active reasons: "degraded: throttle_thermal"."""
        return f"{self.state}: {', '.join(self.reasons)}" if self.reasons else self.state


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuSnapshot:
    """One GPU at one collection: identity, then readings (None: unknown, left out)."""

    vendor: Vendor
    index: int
    pci_bus_id: str
    card: str
    model: str
    serial: str
    uuid: str
    utilization_ratio: float | None = None
    memory_activity_ratio: float | None = None
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    power_watts: float | None = None
    power_limit_watts: float | None = None
    energy_joules: float | None = None
    temperatures_celsius: tuple[tuple[str, float], ...] = ()
    clocks_hertz: tuple[tuple[str, float], ...] = ()
    pcie_link_speed_gts: float | None = None
    pcie_link_width: int | None = None
    pcie_replays: int | None = None
    ecc_errors: tuple[tuple[str, str, int], ...] = ()  # (block, correctable|uncorrectable, count)
    partition_utilization_ratios: tuple[float, ...] = ()
    numa_node: int | None = None
    static: GpuStatic | None = None
    throttle: ThrottleReading | None = None
    vram_bad_pages: tuple[tuple[str, int], ...] = ()  # (retired|pending|unretirable, count)
    health: GpuHealth | None = None  # set by health.py after the reading

    def with_health(self, health: GpuHealth) -> GpuSnapshot:
        """This reading with its health: a copy made field by field as the frozen dataclass's
        own __init__ sets them (dataclasses.replace took 11 µs a GPU, a tenth of a cycle's
        budget for health)."""
        judged = object.__new__(GpuSnapshot)
        for name in _SNAPSHOT_FIELDS:
            object.__setattr__(judged, name, getattr(self, name))
        object.__setattr__(judged, "health", health)
        return judged


_SNAPSHOT_FIELDS = tuple(f.name for f in dataclasses.fields(GpuSnapshot) if f.name != "health")


@dataclasses.dataclass(frozen=True, slots=True)
class GpuCollection:
    """A GPU collector's result: the GPUs it read and the attributes it could not."""

    gpus: tuple[GpuSnapshot, ...]
    problems: tuple[str, ...] = ()


def percent_of(ratio: float | None) -> float | None:
    """The percentage a device reported, from the ratio Lens keeps: 0.55 * 100 is
    55.00000000000001 in binary floating point, so the product is rounded to 12 significant
    digits, more than any device reports and far fewer than the error."""
    return None if ratio is None else float(f"{ratio * 100:.12g}")


def numbered_after(gpus: Sequence[GpuSnapshot], count: int) -> tuple[GpuSnapshot, ...]:
    """`gpus` renumbered to follow `count` others: on a node with both vendors, NVIDIA GPUs
    come after the AMD ones so that `gpu` and the original's `gpu_id` stay unique."""
    if not count:
        return tuple(gpus)
    return tuple(dataclasses.replace(g, index=g.index + count) for g in gpus)


def _info(gpu: GpuSnapshot) -> list[Sample]:
    static = gpu.static or GpuStatic(pci_bus_id=gpu.pci_bus_id)
    labels = (
        gpu.vendor,
        gpu.uuid,
        static.driver_version or "",
        static.vbios or "",
        static.compute_partition or "",
        static.memory_partition or "",
        str(gpu.numa_node if gpu.numa_node is not None else ""),
    )
    return [(labels, 1.0)]


def _health_state(gpu: GpuSnapshot) -> list[Sample]:
    if gpu.health is None:
        return []
    current = gpu.health.state
    return [((state,), 1.0 if state == current else 0.0) for state in healthrules.STATES]


def _health_reasons(gpu: GpuSnapshot) -> list[Sample]:
    return [((reason,), 1.0) for reason in gpu.health.reasons] if gpu.health else []


def _throttled(gpu: GpuSnapshot) -> list[Sample]:
    return [((name,), 1.0) for name in gpu.health.throttled] if gpu.health else []


FAMILIES: FamilyGroup[GpuSnapshot] = FamilyGroup(
    identity_labels=("gpu", "card", "pci_bus_id", "serial", "model"),
    identity=lambda g: (str(g.index), g.card, g.pci_bus_id, g.serial, g.model),
    specs=(
        spec(
            "lens_gpu_info",
            "Static facts of a GPU as labels; the value is always 1.",
            "info",
            (
                "vendor",
                "uuid",
                "driver_version",
                "vbios",
                "compute_partition",
                "memory_partition",
                "numa_node",
            ),
            samples=_info,
        ),
        spec(
            "lens_gpu_utilization_ratio",
            "Share of time the GPU's compute engines were busy, from 0 to 1.",
            samples=lambda g: one(g.utilization_ratio),
        ),
        spec(
            "lens_gpu_memory_activity_ratio",
            "Share of time the GPU's memory controller was busy, from 0 to 1.",
            samples=lambda g: one(g.memory_activity_ratio),
        ),
        spec(
            "lens_gpu_memory_total_bytes",
            "GPU memory (VRAM) size in bytes.",
            samples=lambda g: one(g.memory_total_bytes),
        ),
        spec(
            "lens_gpu_memory_used_bytes",
            "GPU memory (VRAM) in use, in bytes.",
            samples=lambda g: one(g.memory_used_bytes),
        ),
        spec(
            "lens_gpu_power_watts",
            "Power draw of the GPU board or socket, in watts.",
            samples=lambda g: one(g.power_watts),
        ),
        spec(
            "lens_gpu_power_limit_watts",
            "Power cap in force, in watts.",
            samples=lambda g: one(g.power_limit_watts),
        ),
        spec(
            "lens_gpu_energy_joules_total",
            "Energy used since the driver loaded, in joules.",
            "counter",
            samples=lambda g: one(g.energy_joules),
        ),
        spec(
            "lens_gpu_temperature_celsius",
            "Temperature by sensor (AMD: edge, junction, memory; NVIDIA: gpu), in degrees Celsius.",
            labels=("sensor",),
            samples=lambda g: [((sensor,), value) for sensor, value in g.temperatures_celsius],
        ),
        spec(
            "lens_gpu_clock_hertz",
            "Current clock by domain (sclk: compute, mclk: memory), in hertz.",
            labels=("domain",),
            samples=lambda g: [((domain,), value) for domain, value in g.clocks_hertz],
        ),
        spec(
            "lens_gpu_pcie_link_speed_transfers_per_second",
            "Current PCIe link speed per lane, in transfers per second.",
            samples=lambda g: one(
                None if g.pcie_link_speed_gts is None else g.pcie_link_speed_gts * 1e9
            ),
        ),
        spec(
            "lens_gpu_pcie_link_width_lanes",
            "Current PCIe link width in lanes.",
            samples=lambda g: one(g.pcie_link_width),
        ),
        spec(
            "lens_gpu_pcie_replays_total",
            "PCIe packets replayed since the driver loaded.",
            "counter",
            samples=lambda g: one(g.pcie_replays),
        ),
        spec(
            "lens_gpu_ecc_errors_total",
            "Memory errors by RAS block and kind (correctable, uncorrectable) since the driver "
            "loaded.",
            "counter",
            ("block", "kind"),
            samples=lambda g: [
                ((block, kind), float(count)) for block, kind, count in g.ecc_errors
            ],
        ),
        spec(
            "lens_gpu_health",
            "A GPU's health as a state set (healthy, degraded, unhealthy): 1 on the current "
            "state, judged by the rules in docs/node-agent.md.",
            labels=("state",),
            samples=_health_state,
        ),
        spec(
            "lens_gpu_health_reason",
            "A reason of the health rules active for the GPU, one sample of 1 each (none while "
            "no reason is active).",
            labels=("reason",),
            samples=_health_reasons,
        ),
        spec(
            "lens_gpu_throttled",
            "A throttler that held the GPU's clocks back over the last reading interval, one "
            "sample of 1 each (AMD: prochot, power, thermal_socket, thermal_vr, thermal_hbm; "
            "NVIDIA: power, thermal, hw_slowdown, power_brake).",
            labels=("throttler",),
            samples=_throttled,
        ),
        spec(
            "lens_gpu_vram_bad_pages",
            "Bad VRAM pages by status: retired, pending (retired at the next reset), unretirable.",
            labels=("status",),
            samples=lambda g: [((status,), float(count)) for status, count in g.vram_bad_pages],
        ),
        spec(
            "lens_gpu_partition_utilization_ratio",
            "Share of time a compute partition's engines were busy, from 0 to 1.",
            labels=("partition",),
            samples=lambda g: [
                ((str(i),), ratio) for i, ratio in enumerate(g.partition_utilization_ratios)
            ],
        ),
    ),
)

COMPAT_FAMILIES: FamilyGroup[GpuSnapshot] = FamilyGroup(
    identity_labels=("gpu_id",),
    identity=lambda g: (str(g.index),),
    specs=(
        FamilySpec(
            name="gpu_utilization",
            help="GPU use in percent, from 0 to 100 (the original exporter's name).",
            type="gauge",
            samples=lambda g: one(percent_of(g.utilization_ratio)),
            stability="stable",
        ),
    ),
)
