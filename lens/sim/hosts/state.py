"""What a simulated node has (identities) and reads now (readings), computed from its spec.

Identities are fixed and reproducible from the seed; readings follow each device's load
profile, and counters (energy, bytes, packets) integrate over time, so they only grow.
tree.py writes both into files; the NVML stand-in and the tool stand-ins read them.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Literal

from lens.devices import gpumetrics
from lens.sim.hosts import models, profiles
from lens.sim.hosts.models import GpuModel

LinkLayer = Literal["InfiniBand", "Ethernet"]

PARTITION_COUNT = {"SPX": 1, "DPX": 2, "TPX": 3, "QPX": 4, "CPX": 8}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeSpec:
    """A node's hardware: what `lens sim node` and the scenarios build."""

    name: str = "gpu-node-0"
    model: str = "MI300X"
    gpus: int = 8
    compute_partition: str = "SPX"
    memory_partition: str = "NPS1"
    rdma: int = 8
    rdma_link_layer: LinkLayer = "Ethernet"
    seed: int = 0
    amd_smi_layout: Literal["bare", "gpu_data"] = "gpu_data"

    def __post_init__(self) -> None:
        if self.model not in models.MODELS:
            raise ValueError(f"unknown GPU model {self.model!r}; known: {', '.join(models.MODELS)}")
        if not 0 <= self.gpus <= len(models.GPU_BUSES) or not 0 <= self.rdma <= len(
            models.NIC_BUSES
        ):
            raise ValueError(
                f"at most {len(models.GPU_BUSES)} GPUs and {len(models.NIC_BUSES)} RDMA devices"
            )
        if self.compute_partition not in self.gpu_model.compute_partitions:
            raise ValueError(
                f"{self.model} does not support compute partition {self.compute_partition}"
            )

    @property
    def gpu_model(self) -> GpuModel:
        return models.MODELS[self.model]

    @property
    def vendor(self) -> models.Vendor:
        return self.gpu_model.vendor


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Partition:
    """A compute partition beyond the first: a platform device with its own DRM nodes."""

    index: int
    platform_id: int
    card: int
    render_minor: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuIdentity:
    index: int
    bdf: str
    card: int
    render_minor: int
    hwmon: int
    numa_node: int
    serial: str
    unique_id: str
    uuid: str
    kfd_gpu_id: int
    model: GpuModel
    partitions: tuple[Partition, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuReading:
    utilization: float
    memory_activity: float
    power_w: float
    energy_j: float
    temp_edge_c: float | None
    temp_junction_c: float
    temp_mem_c: float
    sclk_mhz: float
    mclk_mhz: float
    vram_used_bytes: int
    ecc_correctable: int
    ecc_uncorrectable: int
    pcie_replay: int
    bad_pages: tuple[str, ...] = ()  # each bad VRAM page's status: R, P or F
    throttle_residency: tuple[tuple[str, int], ...] = ()  # (throttler, seconds throttled)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NicIdentity:
    index: int
    name: str
    bdf: str
    netdev: str
    node_guid: str
    sys_image_guid: str
    firmware: str
    uverbs: int
    numa_node: int
    link_layer: LinkLayer
    rate: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PortReading:
    xmit_bytes: int
    rcv_bytes: int
    xmit_packets: int
    rcv_packets: int
    state: str
    hw_counters: dict[str, int]


def _guid(rng: random.Random) -> str:
    value = rng.getrandbits(48)
    hexed = f"b8ce{value:012x}"
    return ":".join(hexed[i : i + 4] for i in range(0, 16, 4))


def _gpu_identities(spec: NodeSpec, rng: random.Random) -> tuple[GpuIdentity, ...]:
    model = spec.gpu_model
    per_gpu = PARTITION_COUNT[spec.compute_partition] if model.vendor == "amd" else 1
    gpus = []
    extra_card = 1 + spec.gpus  # partition cards come after the physical ones; card0 is the BMC
    for index in range(spec.gpus):
        partitions = []
        for part in range(1, per_gpu):
            platform_id = extra_card - 1 - spec.gpus
            minor = 128 + extra_card - 1
            partitions.append(
                Partition(index=part, platform_id=platform_id, card=extra_card, render_minor=minor)
            )
            extra_card += 1
        uuid_parts = (
            rng.getrandbits(32),
            rng.getrandbits(16),
            rng.getrandbits(16),
            rng.getrandbits(16),
        )
        gpus.append(
            GpuIdentity(
                index=index,
                bdf=models.bdf(models.GPU_BUSES[index]),
                card=index + 1,
                render_minor=128 + index,
                hwmon=index + 2,  # hwmon0 and hwmon1 belong to the CPU and ACPI
                numa_node=0 if index < max(1, spec.gpus // 2) else 1,
                serial=f"{rng.getrandbits(40):010X}",
                unique_id=f"{rng.getrandbits(64):016x}",
                uuid="GPU-{:08x}-{:04x}-{:04x}-{:04x}-".format(*uuid_parts)
                + f"{rng.getrandbits(48):012x}",
                kfd_gpu_id=rng.randint(1000, 65535),
                model=model,
                partitions=tuple(partitions),
            )
        )
    return tuple(gpus)


def _nic_identities(spec: NodeSpec, rng: random.Random) -> tuple[NicIdentity, ...]:
    nics = []
    for index in range(spec.rdma):
        guid = _guid(rng)
        bus = models.NIC_BUSES[index]
        ethernet = spec.rdma_link_layer == "Ethernet"
        nics.append(
            NicIdentity(
                index=index,
                name=f"mlx5_{index}",
                bdf=models.bdf(bus),
                netdev=f"enp{bus}s0np0" if ethernet else f"ib{index}",
                node_guid=guid,
                sys_image_guid=guid,
                firmware="28.39.1002",
                uverbs=index,
                numa_node=0 if index < max(1, spec.rdma // 2) else 1,
                link_layer=spec.rdma_link_layer,
                rate="400 Gb/sec (4X NDR)",
            )
        )
    return tuple(nics)


def _identities(spec: NodeSpec) -> tuple[tuple[GpuIdentity, ...], tuple[NicIdentity, ...]]:
    rng = random.Random(f"{spec.name}/{spec.seed}")
    return _gpu_identities(spec, rng), _nic_identities(spec, rng)


def gpu_identities(spec: NodeSpec) -> tuple[GpuIdentity, ...]:
    """The GPUs a node built from `spec` has (the same on every call), without building it."""
    return _identities(spec)[0]


@dataclasses.dataclass(slots=True)
class GpuFaults:
    """Faults injected into one GPU (NodeModel's inject methods), beside what its load does."""

    uncorrectable: int = 0
    correctable: int = 0
    bad_pages: list[str] = dataclasses.field(default_factory=list)  # R, P or F per page
    throttling: frozenset[str] = frozenset()  # prochot, power, thermal_socket, ...
    residency: dict[str, int] = dataclasses.field(default_factory=dict)  # seconds throttled


# The throttlers an MI300's gpu_metrics names, as the agent reads them (one residency counter
# each).
THROTTLERS = tuple(reason for _field, reason in gpumetrics.RESIDENCY_FIELDS)


class NodeModel:
    """Identities and current readings of one simulated node."""

    def __init__(
        self, spec: NodeSpec, *, start: float, device_profiles: list[profiles.Profile] | None = None
    ):
        self.spec = spec
        self.gpus, self.nics = _identities(spec)
        count = max(len(self.gpus), len(self.nics))
        self.profiles = device_profiles or [profiles.pick(i, spec.seed) for i in range(count)]
        self._last = start
        self._energy = [0.0] * len(self.gpus)
        self._bytes = [[0, 0] for _ in self.nics]
        self._errors = [0] * len(self.gpus)
        self.faults = [GpuFaults() for _ in self.gpus]
        self.ports_down: set[int] = set()  # NICs whose link went down (HostTree.set_port_down)
        self.now = start
        self.gpu_readings = tuple(self._gpu(i, start) for i in range(len(self.gpus)))
        self.port_readings = tuple(self._port(i) for i in range(len(self.nics)))

    def add_memory_errors(
        self, index: int, *, uncorrectable: int = 0, correctable: int = 0
    ) -> None:
        """GPU `index`'s RAS counts (its umc block) grow by these, from the next reading."""
        self.faults[index].uncorrectable += uncorrectable
        self.faults[index].correctable += correctable

    def add_bad_pages(
        self, index: int, *, retired: int = 0, pending: int = 0, unretirable: int = 0
    ) -> None:
        """Bad VRAM pages of GPU `index`, listed in ras/gpu_vram_bad_pages from the next reading."""
        self.faults[index].bad_pages += ["R"] * retired + ["P"] * pending + ["F"] * unretirable

    def retire_pending_pages(self, index: int) -> None:
        """What a GPU reset does: its pending pages retired."""
        pages = self.faults[index].bad_pages
        pages[:] = ["R" if status == "P" else status for status in pages]

    def throttle(self, index: int, throttlers: frozenset[str] = frozenset()) -> None:
        """GPU `index` throttled by `throttlers` from now on (none: no longer)."""
        unknown = set(throttlers) - set(THROTTLERS)
        if unknown:
            raise ValueError(f"unknown throttlers {sorted(unknown)}; known: {THROTTLERS}")
        self.faults[index].throttling = frozenset(throttlers)

    def advance(self, now: float) -> None:
        """Move to time `now`: counters grow by what the load did since the last call."""
        elapsed = max(0.0, now - self._last)
        periods = int(now) - int(self._last)  # gpu_metrics' accumulation_counter is int(now)
        for faults in self.faults:
            for throttler in faults.throttling:
                faults.residency[throttler] = faults.residency.get(throttler, 0) + max(0, periods)
        self._last = self.now = now
        for index, gpu in enumerate(self.gpus):
            power = self._power(gpu.model, self._utilization(index, now))
            self._energy[index] += power * elapsed
            if self._utilization(index, now) > 90 and int(now) % 97 == index:
                self._errors[index] += 1  # a rare correctable ECC error under heavy load
        for index in range(len(self.nics)):
            rate = (
                400e9 / 8 * self._utilization(index, now) / 100 * 0.6
            )  # bytes/s at 60 % efficiency
            self._bytes[index][0] += int(rate * elapsed)
            self._bytes[index][1] += int(rate * elapsed * 0.97)
        self.gpu_readings = tuple(self._gpu(i, now) for i in range(len(self.gpus)))
        self.port_readings = tuple(self._port(i) for i in range(len(self.nics)))

    def _utilization(self, index: int, now: float) -> float:
        return self.profiles[index % len(self.profiles)].utilization(now)

    @staticmethod
    def _power(model: GpuModel, utilization: float) -> float:
        return (
            model.idle_power_w + (model.max_power_w - model.idle_power_w) * utilization / 100 * 0.85
        )

    def _gpu(self, index: int, now: float) -> GpuReading:
        model = self.gpus[index].model
        load = self._utilization(index, now) / 100
        return GpuReading(
            utilization=round(load * 100),
            memory_activity=round(load * 60),
            power_w=round(self._power(model, load * 100), 1),
            energy_j=self._energy[index],
            temp_edge_c=round(30 + 40 * load, 1) if model.has_edge_sensor else None,
            temp_junction_c=round(38 + 50 * load, 1),
            temp_mem_c=round(34 + 40 * load, 1),
            sclk_mhz=round(132 + (model.peak_sclk_mhz - 132) * load),
            mclk_mhz=model.mclk_mhz if load > 0.05 else 900,
            vram_used_bytes=int(model.vram_bytes * (0.01 + 0.85 * load)) // 4096 * 4096,
            ecc_correctable=self._errors[index] + self.faults[index].correctable,
            ecc_uncorrectable=self.faults[index].uncorrectable,
            pcie_replay=self._errors[index] // 3,
            bad_pages=tuple(self.faults[index].bad_pages),
            throttle_residency=tuple(
                (name, self.faults[index].residency.get(name, 0)) for name in THROTTLERS
            ),
        )

    def _port(self, index: int) -> PortReading:
        sent, received = self._bytes[index]
        return PortReading(
            xmit_bytes=sent,
            rcv_bytes=received,
            xmit_packets=sent // 4096,
            rcv_packets=received // 4096,
            state="DOWN" if index in self.ports_down else "ACTIVE",
            hw_counters={
                "rx_write_requests": received // 65536,
                "rx_read_requests": received // 131072,
                "rx_atomic_requests": 0,
                "out_of_buffer": 0,
                "out_of_sequence": 0,
                "duplicate_request": 0,
                "local_ack_timeout_err": 0,
                "np_cnp_sent": received // 10_000_000,
                "rp_cnp_handled": sent // 10_000_000,
                "np_ecn_marked_roce_packets": received // 5_000_000,
            },
        )
