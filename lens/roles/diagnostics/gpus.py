"""`lens gpus`: every GPU of this node (AMD through sysfs, NVIDIA through NVML) as a table or JSON.

Reads what the node agent reads, with the readers it builds (devices/sources.py) from the same
`host` config, and no cluster or database: vendors from the PCI bus, static facts once
(amd-smi, then rocm-smi, then sysfs), readings and DRI nodes on every read. A source that fails
is named under the table, never a crash. Each GPU's health is judged by the agent's rules
(devices/healthrules.py) over the reads made so far: one read shows errors and bad pages, a
throttle counts once `--watch` has seen it last its minute.
"""

from __future__ import annotations

import dataclasses
import time

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from lens.devices import gpu as gpu_model
from lens.devices.dri import DriCollector, DriMapping
from lens.devices.gpu import GpuSnapshot
from lens.devices.health import HealthTracker
from lens.devices.sources import NodeSources, node_sources, nvidia_driver
from lens.roles.diagnostics import showing
from lens.runtime import errors
from lens.runtime.config import HostConfig, NodeAgentConfig


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuReport:
    gpus: tuple[GpuSnapshot, ...]
    dri: DriMapping | None
    driver_version: str | None
    facts_source: str
    problems: tuple[str, ...]
    read_at: float


class GpuReader:
    """Reads the node's GPUs; static facts are read once, when it is made."""

    def __init__(self, sources: NodeSources) -> None:
        self._present = sources.vendors.refresh()
        self._statics = sources.statics
        self._problems: tuple[str, ...] = ()
        if "amd" in self._present:
            try:
                self._statics.refresh()
            except errors.LensError as exc:  # sysfs unreadable: the readings will say more
                self._problems = (f"static facts: {exc}",)
        self._sources = sources
        self._amd = sources.amd_collector()
        self._dri = DriCollector(sources.host)
        self._health = HealthTracker(
            correctable_errors_per_hour=NodeAgentConfig().gpu_correctable_errors_per_hour
        )

    def _nvidia_gpus(self, problems: list[str]) -> tuple[GpuSnapshot, ...]:
        try:
            collection = self._sources.nvidia().collect()
        except errors.LensError as exc:
            problems.append(f"nvidia: {exc}")
            return ()
        problems.extend(collection.problems)
        return collection.gpus

    def read(self) -> GpuReport:
        problems = [*self._problems, *self._statics.current().problems]
        gpus: list[GpuSnapshot] = []
        if "amd" in self._present:
            try:
                collection = self._amd.collect()
                gpus.extend(collection.gpus)
                problems.extend(collection.problems)
            except errors.LensError as exc:
                problems.append(f"amdgpu: {exc}")
        if "nvidia" in self._present:
            gpus.extend(gpu_model.numbered_after(self._nvidia_gpus(problems), len(gpus)))
        read_at = time.time()
        gpus = list(self._health.assess(gpus, read_at))
        try:
            dri: DriMapping | None = self._dri.collect() if gpus else None
        except errors.LensError:
            dri = None
        statics = self._statics.current()
        return GpuReport(
            gpus=tuple(gpus),
            dri=dri,
            driver_version=statics.driver_version or nvidia_driver(gpus),
            facts_source=statics.source,
            problems=tuple(problems),
            read_at=read_at,
        )


def _number(value: float | None, per: float = 1.0, digits: int = 0) -> str:
    return "-" if value is None else f"{value / per:.{digits}f}"


def _render_node(report: GpuReport, gpu: GpuSnapshot) -> str:
    nodes = report.dri.of_gpu(gpu.pci_bus_id) if report.dri else ()
    if not nodes:
        return gpu.card
    first = nodes[0]
    name = (first.render or first.card or "").rsplit("/", 1)[-1]
    return f"{name} +{len(nodes) - 1}" if len(nodes) > 1 else name


def _row(report: GpuReport, gpu: GpuSnapshot) -> list[str]:
    temperatures = dict(gpu.temperatures_celsius)
    temperature = temperatures.get("junction", temperatures.get("gpu", temperatures.get("edge")))
    corrected = sum(n for _, kind, n in gpu.ecc_errors if kind == "correctable")
    uncorrected = sum(n for _, kind, n in gpu.ecc_errors if kind == "uncorrectable")
    static = gpu.static
    return [
        str(gpu.index),
        gpu.model,
        gpu.pci_bus_id,
        _render_node(report, gpu),
        _number(gpu.utilization_ratio, 0.01),
        f"{_number(gpu.memory_used_bytes, 1024**3)}/{_number(gpu.memory_total_bytes, 1024**3)}",
        f"{_number(gpu.power_watts)}/{_number(gpu.power_limit_watts)}",
        _number(temperature),
        _number(dict(gpu.clocks_hertz).get("sclk"), 1e6),
        f"{corrected}/{uncorrected}" if gpu.ecc_errors else "-",
        (static.compute_partition if static and static.compute_partition else "-"),
        str(gpu.numa_node) if gpu.numa_node is not None else "-",
        _health(gpu),
    ]


def _health(gpu: GpuSnapshot) -> str:
    return gpu.health.summary() if gpu.health is not None else "-"


def table(report: GpuReport) -> Group:
    # Every text that came from a device or tool is a Text, never console markup: a model
    # named "[/]" would otherwise stop the table from printing at all.
    caption = Text(
        f"driver {report.driver_version or 'unknown'} · static facts from {report.facts_source}"
    )
    grid = Table(
        box=box.SIMPLE_HEAD,
        title=f"{len(report.gpus)} GPUs",
        caption=caption,
        caption_justify="left",
    )
    for name in ("GPU", "Model", "PCI", "DRI", "Use %", "VRAM GiB", "Power W", "Temp °C"):
        grid.add_column(name, justify="right" if name.endswith(("%", "W", "C")) else "left")
    for name in ("Clock MHz", "ECC c/u", "Partition", "NUMA"):
        grid.add_column(name, justify="right")
    grid.add_column("Health")
    for gpu in report.gpus:
        grid.add_row(*(Text(cell) for cell in _row(report, gpu)))
    return Group(grid, *(Text(f"! {problem}", style="yellow") for problem in report.problems))


def to_json(report: GpuReport) -> dict[str, object]:
    return {
        "driver_version": report.driver_version,
        "static_facts_source": report.facts_source,
        "read_at": report.read_at,
        "gpus": [
            {
                **dataclasses.asdict(gpu),
                "dri": [
                    dataclasses.asdict(n)
                    for n in (report.dri.of_gpu(gpu.pci_bus_id) if report.dri else ())
                ],
            }
            for gpu in report.gpus
        ],
        "problems": list(report.problems),
    }


def diagnostic(
    host: HostConfig, *, nvml_binding: object | None = None
) -> showing.Diagnostic[GpuReport]:
    """`lens gpus` for the host seen at `host.root` (its tools looked for under it)."""
    reader = GpuReader(node_sources(host, wall_time=time.time, nvml_binding=nvml_binding))
    return showing.Diagnostic(
        read=reader.read, table=table, to_json=to_json, empty=lambda report: not report.gpus
    )
