"""The AMD GPU collector: amdgpu sysfs, hwmon and gpu_metrics, read each cycle without a subprocess.

Files and units per shared/formats/amdgpu-sysfs.md: hwmon temperatures in millidegrees, power
in microwatts (power1_input on MI300, power1_average before), clocks in hertz; RAS counts as
"ue: N / ce: N". Cards are found under /sys/class/drm and kept when their device's uevent says
DRIVER=amdgpu with a PCI slot (the BMC's display and partition platform devices are skipped),
ordered by PCI address. Static facts come from a StaticFacts source (amd-smi, refreshed rarely).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable
from typing import ClassVar

from lens.devices import gpumetrics, metricstable
from lens.devices.gpu import GpuCollection, GpuSnapshot, GpuStatic, ThrottleReading
from lens.devices.sysfs import HostFiles, ReadError, parse_int, parse_key_values
from lens.runtime import errors

log = logging.getLogger(__name__)

_CARD_RE = re.compile(r"^card\d+$")
_Readings = tuple[tuple[str, float], ...]
_RAS_BLOCKS = ("umc", "gfx", "sdma", "mmhub", "xgmi_wafl", "pcie_bif", "hdp")
# Whose throttle_status has SMU 13.0.6's bits (MI300); v1.3's bits are another ASIC's.
_STATUS_BIT_REVISIONS = frozenset({(1, 4), (1, 5)})


@dataclasses.dataclass(frozen=True, slots=True)
class AmdCard:
    """What discovery finds once per card: where it is and who it is."""

    card: str
    pci_bus_id: str
    device_dir: str
    hwmon_dir: str | None
    serial: str
    unique_id: str
    product_name: str
    device_id: str
    numa_node: int | None
    power_file: str | None
    temperature_files: tuple[tuple[str, str], ...] = ()  # (sensor, hwmon file) present
    ras_blocks: tuple[str, ...] = ()  # RAS blocks with an error count file
    bad_pages: bool = False  # ras/gpu_vram_bad_pages is there


def parse_ras_count(text: str | None) -> tuple[int, int] | None:
    """`ue: N` / `ce: N` lines -> (uncorrectable, correctable)."""
    pairs = parse_key_values(text, ":")
    if "ue" not in pairs or "ce" not in pairs:
        return None
    ue, ce = parse_int(pairs["ue"]), parse_int(pairs["ce"])
    return None if ue is None or ce is None else (ue, ce)


_PAGE_STATUS = {"R": "retired", "P": "pending", "F": "unretirable"}
_BAD_PAGE = re.compile(r"^\s*0x[0-9a-fA-F]+\s*:\s*0x[0-9a-fA-F]+\s*:\s*([RPF])\s*$")


def parse_bad_pages(text: str | None) -> tuple[tuple[str, int], ...] | None:
    """`0x00001234 : 0x00001000 : R` lines (page, size, status: R retired, P pending, F could
    not be retired) -> the count of each status, every status listed; None when a line is
    none of these."""
    if text is None:
        return None
    counts = dict.fromkeys(_PAGE_STATUS.values(), 0)
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _BAD_PAGE.match(line)
        if match is None:
            return None
        counts[_PAGE_STATUS[match.group(1)]] += 1
    return tuple(counts.items())


def _finite(number: str) -> float | None:
    """The float a run of digits spells; None past the largest float (it would be infinity)."""
    value = float(number)
    return value if math.isfinite(value) else None


def parse_link_speed(text: str | None) -> float | None:
    """`32.0 GT/s PCIe` (or `8 GT/s`) -> 32.0."""
    match = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s", text or "")
    return _finite(match.group(1)) if match else None


def parse_dpm_current(text: str | None) -> float | None:
    """The level marked `*` in a pp_dpm_* file (`1: 1500Mhz *`), in MHz."""
    for line in (text or "").splitlines():
        match = re.match(r"^\s*\S+:\s*([0-9]+)\s*Mhz\s*\*", line, re.IGNORECASE)
        if match:
            return _finite(match.group(1))
    return None


def find_cards(host: HostFiles) -> list[tuple[str, str, str]]:
    """(card, device directory, PCI address) of each amdgpu PCI card under /sys/class/drm."""
    cards = []
    for entry in host.list("/sys/class/drm"):
        if not _CARD_RE.match(entry):
            continue
        device = f"/sys/class/drm/{entry}/device"
        uevent = parse_key_values(host.read_text(f"{device}/uevent"))
        slot = uevent.get("PCI_SLOT_NAME", "").lower()
        if uevent.get("DRIVER") == "amdgpu" and slot:
            cards.append((entry, device, slot))
    return cards


StaticFacts = Callable[[], dict[str, GpuStatic]]
"""Static facts by PCI address, from the slow source refreshed out of the cycle (amd-smi)."""


class AmdGpuCollector:
    name: ClassVar[str] = "amdgpu"

    def __init__(self, host: HostFiles, *, static_facts: StaticFacts | None = None) -> None:
        self._host = host
        self._static = static_facts or dict
        self._cards: dict[str, AmdCard] = {}
        self._listing: list[str] | None = None
        self._found: list[AmdCard] = []

    def discover(self) -> list[AmdCard]:
        """amdgpu cards by PCI address; found again only when /sys/class/drm changes."""
        listing = self._host.list("/sys/class/drm")
        if listing == self._listing and self._found:
            return self._found
        found = []
        for entry, device, slot in find_cards(self._host):
            cached = self._cards.get(slot)
            if cached is None or cached.card != entry:
                cached = self._identify(entry, device, slot)
                self._cards[slot] = cached
            found.append(cached)
        if not found:
            raise errors.NoDataError("no amdgpu cards under /sys/class/drm")
        self._listing, self._found = listing, sorted(found, key=lambda c: c.pci_bus_id)
        return self._found

    def _identify(self, card: str, device: str, slot: str) -> AmdCard:
        read = self._host.read_text
        hwmon = next(
            (
                f"{device}/hwmon/{h}"
                for h in self._host.list(f"{device}/hwmon")
                if read(f"{device}/hwmon/{h}/name") == "amdgpu"
            ),
            None,
        )
        power_file: str | None = None
        temperatures: tuple[tuple[str, str], ...] = ()
        if hwmon is not None:
            present = set(self._host.list(hwmon))
            power_file = next((f for f in ("power1_input", "power1_average") if f in present), None)
            temperatures = tuple(
                (sensor, f"temp{i}_input")
                for sensor, i in (("edge", 1), ("junction", 2), ("memory", 3))
                if f"temp{i}_input" in present
            )
        ras = set(self._host.list(f"{device}/ras"))
        return AmdCard(
            card=card,
            pci_bus_id=slot,
            device_dir=device,
            hwmon_dir=hwmon,
            serial=read(f"{device}/serial_number") or "",
            unique_id=read(f"{device}/unique_id") or "",
            product_name=read(f"{device}/product_name") or "",
            device_id=read(f"{device}/device") or "",
            numa_node=parse_int(read(f"{device}/numa_node")),
            power_file=power_file,
            temperature_files=temperatures,
            ras_blocks=tuple(b for b in _RAS_BLOCKS if f"{b}_err_count" in ras),
            bad_pages="gpu_vram_bad_pages" in ras,
        )

    def collect(self) -> GpuCollection:
        cards = self.discover()
        statics = self._static()
        problems: list[str] = []
        gpus = tuple(
            self._read(index, card, statics.get(card.pci_bus_id), problems)
            for index, card in enumerate(cards)
        )
        self._host.sweep()
        return GpuCollection(gpus, tuple(problems))

    def _reader(self, problems: list[str]) -> Callable[[str], str | None]:
        def read(path: str) -> str | None:
            try:
                return self._host.read_text(path)
            except ReadError as exc:
                problems.append(str(exc))
                return None

        return read

    def _number(
        self, read: Callable[[str], str | None], path: str, problems: list[str], per: float = 1.0
    ) -> float | None:
        """The file's integer divided by `per` (its unit per base unit: 1e6 for microwatts)."""
        text = read(path)
        value = parse_int(text)
        if text is not None and value is None:
            problems.append(f"{path}: not a number: {text[:40]!r}")
        return None if value is None else value / per

    def _read(
        self, index: int, card: AmdCard, static: GpuStatic | None, problems: list[str]
    ) -> GpuSnapshot:
        read = self._reader(problems)
        device = card.device_dir
        busy = self._number(read, f"{device}/gpu_busy_percent", problems, 100)
        metrics = self._metrics(device, problems)
        temperatures, clocks, power, limit = self._hwmon(read, card, problems)
        if metrics is not None:
            power = metrics.socket_power_w if power is None else power
            temperatures = temperatures or _metrics_temperatures(metrics)
        partitions = tuple(p / 100 for p in metrics.partition_busy_percent) if metrics else ()
        return GpuSnapshot(
            vendor="amd",
            index=index,
            pci_bus_id=card.pci_bus_id,
            card=card.card,
            model=(static.market_name if static and static.market_name else card.product_name)
            or card.device_id,
            serial=(static.serial if static and static.serial else card.serial),
            uuid=card.unique_id,
            utilization_ratio=busy,
            memory_activity_ratio=self._number(read, f"{device}/mem_busy_percent", problems, 100),
            memory_total_bytes=_as_int(
                self._number(read, f"{device}/mem_info_vram_total", problems)
            ),
            memory_used_bytes=_as_int(self._number(read, f"{device}/mem_info_vram_used", problems)),
            power_watts=power,
            power_limit_watts=limit,
            energy_joules=metrics.energy_j if metrics else None,
            temperatures_celsius=temperatures,
            clocks_hertz=clocks,
            pcie_link_speed_gts=parse_link_speed(read(f"{device}/current_link_speed")),
            pcie_link_width=_as_int(self._number(read, f"{device}/current_link_width", problems)),
            pcie_replays=_as_int(self._number(read, f"{device}/pcie_replay_count", problems)),
            ecc_errors=self._ecc(read, card),
            partition_utilization_ratios=partitions,
            numa_node=card.numa_node,
            static=static,
            throttle=_throttle(metrics),
            vram_bad_pages=self._bad_pages(read, card, problems),
        )

    def _bad_pages(
        self, read: Callable[[str], str | None], card: AmdCard, problems: list[str]
    ) -> tuple[tuple[str, int], ...]:
        if not card.bad_pages:
            return ()
        path = f"{card.device_dir}/ras/gpu_vram_bad_pages"
        text = read(path)
        counts = parse_bad_pages(text)
        if text is not None and counts is None:
            problems.append(f"{path}: not a bad page list: {text[:60]!r}")
        return counts or ()

    def _hwmon(
        self, read: Callable[[str], str | None], card: AmdCard, problems: list[str]
    ) -> tuple[_Readings, _Readings, float | None, float | None]:
        """Temperatures, clocks, power and power cap from the card's amdgpu hwmon."""
        hwmon = card.hwmon_dir
        if hwmon is None:
            return (), (), None, None
        clocks = tuple(
            (domain, value)
            for domain, value in (
                ("sclk", self._number(read, f"{hwmon}/freq1_input", problems)),
                ("mclk", self._number(read, f"{hwmon}/freq2_input", problems)),
            )
            if value is not None
        )
        power = None
        if card.power_file is not None:
            power = self._number(read, f"{hwmon}/{card.power_file}", problems, 1e6)
        limit = self._number(read, f"{hwmon}/power1_cap", problems, 1e6)
        temperatures = tuple(
            (sensor, value)
            for sensor, file in card.temperature_files
            if (value := self._number(read, f"{hwmon}/{file}", problems, 1000)) is not None
        )
        return temperatures, clocks, power, limit

    def _ecc(
        self, read: Callable[[str], str | None], card: AmdCard
    ) -> tuple[tuple[str, str, int], ...]:
        counts = []
        for block in card.ras_blocks:
            parsed = parse_ras_count(read(f"{card.device_dir}/ras/{block}_err_count"))
            if parsed is not None:
                counts.append((block, "uncorrectable", parsed[0]))
                counts.append((block, "correctable", parsed[1]))
        return tuple(counts)

    def _metrics(self, device: str, problems: list[str]) -> metricstable.GpuMetrics | None:
        try:
            blob = self._host.read_bytes(f"{device}/gpu_metrics")
        except ReadError as exc:
            problems.append(str(exc))
            return None
        if blob is None:
            return None
        try:
            return metricstable.parse_gpu_metrics(blob)
        except metricstable.GpuMetricsError as exc:
            problems.append(f"{device}/gpu_metrics: {exc}")
            return None


def _metrics_temperatures(metrics: metricstable.GpuMetrics) -> _Readings:
    """Temperatures from gpu_metrics, for a card whose hwmon has none."""
    return tuple(
        (sensor, value)
        for sensor, value in (
            ("edge", metrics.temperature_edge_c),
            ("junction", metrics.temperature_hotspot_c),
            ("memory", metrics.temperature_mem_c),
        )
        if value is not None
    )


def _throttle(metrics: metricstable.GpuMetrics | None) -> ThrottleReading | None:
    """The throttlers of a gpu_metrics table: its status bits (v1.4, v1.5: SMU 13.0.6's), or
    its residency counters (v1.6+)."""
    if metrics is None:
        return None
    if metrics.throttle_residency:
        return ThrottleReading(
            residency=metrics.throttle_residency, accumulations=metrics.accumulation_counter
        )
    if metrics.throttle_status is not None and metrics.revision in _STATUS_BIT_REVISIONS:
        status = metrics.throttle_status
        active = tuple(name for bit, name in gpumetrics.THROTTLE_STATUS_BITS if status >> bit & 1)
        return ThrottleReading(active=active)
    return None


def _as_int(value: float | None) -> int | None:
    return None if value is None else int(value)
