"""RDMA (InfiniBand and RoCE) data model and the metric families rendered from it.

rdma.py (sysfs) and rdmatool.py (the `rdma` CLI, a fallback) produce an RdmaSnapshot. Lens
families are `lens_ib_*` in base units (the PMA data counters count 4-byte words; bytes are
exported). The original exporter's dynamic `rdma_stat_<counter>{device,port}` gauges, one per
hw counter as `rdma statistic show` prints them, are rendered by `render_compat`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from lens.runtime.families import FamilyGroup, FamilySpec, Sample, one, spec
from lens.runtime.selfmetrics import FamilyDoc
from lens.runtime.textformat import escape_label_value, format_value

PORT_STATES = ("NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER")
PHYSICAL_STATES = (
    "Sleep",
    "Polling",
    "Disabled",
    "PortConfigurationTraining",
    "LinkUp",
    "LinkErrorRecovery",
    "Phy Test",
)
COMPAT_PREFIX = "rdma_stat_"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaPort:
    device: str
    port: int
    state: str | None = None  # ACTIVE, DOWN, ... (PORT_STATES)
    physical_state: str | None = None  # LinkUp, Polling, ... (PHYSICAL_STATES)
    rate_bytes_per_second: float | None = None
    link_layer: str | None = None  # InfiniBand or Ethernet
    netdev: str | None = None
    transmit_bytes: int | None = None
    receive_bytes: int | None = None
    transmit_packets: int | None = None
    receive_packets: int | None = None
    counters: tuple[tuple[str, int], ...] = ()  # other PMA counters, as the kernel counts them
    hw_counters: tuple[tuple[str, int], ...] = ()  # the driver's counters (`rdma statistic`)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaDevice:
    name: str
    index: int  # position on this node in name order (the tool's kernel index when it read it)
    node_type: str | None = None  # CA, RNIC, ...
    fw_version: str | None = None
    node_guid: str | None = None
    sys_image_guid: str | None = None
    hca_type: str | None = None
    board_id: str | None = None
    pci_bus_id: str | None = None
    numa_node: int | None = None
    uverbs: tuple[str, ...] = ()  # uverbsN char devices of this device
    netdevs: tuple[str, ...] = ()
    ports: tuple[RdmaPort, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaSnapshot:
    devices: tuple[RdmaDevice, ...]
    source: str  # sysfs or rdma-tool
    problems: tuple[str, ...] = ()

    @property
    def ports(self) -> tuple[RdmaPort, ...]:
        return tuple(port for device in self.devices for port in device.ports)


def _state_set(current: str | None, states: Sequence[str]) -> list[Sample]:
    if current is None:
        return []
    known = list(states) if current in states else [*states, current]
    return [((state,), 1.0 if state == current else 0.0) for state in known]


PORT_FAMILIES: FamilyGroup[RdmaPort] = FamilyGroup(
    identity_labels=("device", "port"),
    identity=lambda p: (p.device, str(p.port)),
    specs=(
        spec(
            "lens_ib_port_info",
            "An RDMA port's link layer and network device as labels; the value is always 1.",
            "info",
            ("link_layer", "netdev"),
            samples=lambda p: [((p.link_layer or "", p.netdev or ""), 1.0)],
        ),
        spec(
            "lens_ib_port_state",
            "Logical port state as a state set: 1 on the current state (ACTIVE when usable).",
            labels=("state",),
            samples=lambda p: _state_set(p.state, PORT_STATES),
        ),
        spec(
            "lens_ib_port_physical_state",
            "Physical link state as a state set: 1 on the current state (LinkUp when cabled).",
            labels=("state",),
            samples=lambda p: _state_set(p.physical_state, PHYSICAL_STATES),
        ),
        spec(
            "lens_ib_port_rate_bytes_per_second",
            "Signalling rate of the active link, in bytes per second.",
            samples=lambda p: one(p.rate_bytes_per_second),
        ),
        spec(
            "lens_ib_port_transmit_bytes_total",
            "Data sent, in bytes (the kernel's PMA counter counts 4-byte words).",
            "counter",
            samples=lambda p: one(p.transmit_bytes),
        ),
        spec(
            "lens_ib_port_receive_bytes_total",
            "Data received, in bytes (the kernel's PMA counter counts 4-byte words).",
            "counter",
            samples=lambda p: one(p.receive_bytes),
        ),
        spec(
            "lens_ib_port_transmit_packets_total",
            "Packets sent.",
            "counter",
            samples=lambda p: one(p.transmit_packets),
        ),
        spec(
            "lens_ib_port_receive_packets_total",
            "Packets received.",
            "counter",
            samples=lambda p: one(p.receive_packets),
        ),
        # Named `*_events_total`, not `*_counter_total`: a name must not repeat its type
        # (promtool check metrics); docs/metrics.md lists the old names.
        spec(
            "lens_ib_port_pma_events_total",
            "Other port counters of the IB performance management agent (errors, discards, "
            "unicast and multicast packets, transmit wait ticks) by name, as the kernel counts.",
            "counter",
            ("counter",),
            samples=lambda p: [((name,), float(value)) for name, value in p.counters],
        ),
        spec(
            "lens_ib_port_hw_events_total",
            "Driver counters of a port (hw_counters, what `rdma statistic` shows) by name.",
            "counter",
            ("counter",),
            samples=lambda p: [((name,), float(value)) for name, value in p.hw_counters],
        ),
    ),
)


def _device_info(d: RdmaDevice) -> list[Sample]:
    labels = (
        d.node_guid or "",
        d.sys_image_guid or "",
        d.fw_version or "",
        d.node_type or "",
        d.hca_type or "",
        d.pci_bus_id or "",
        "" if d.numa_node is None else str(d.numa_node),
        ",".join(d.uverbs),
    )
    return [(labels, 1.0)]


DEVICE_FAMILIES: FamilyGroup[RdmaDevice] = FamilyGroup(
    identity_labels=("device",),
    identity=lambda d: (d.name,),
    specs=(
        FamilySpec(
            name="lens_ib_device_info",
            help="An RDMA device's identity as labels; the value is always 1.",
            type="info",
            labels=(
                "node_guid",
                "sys_image_guid",
                "fw_version",
                "node_type",
                "hca_type",
                "pci_bus_id",
                "numa_node",
                "uverbs",
            ),
            samples=_device_info,
        ),
    ),
)

_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]")

COMPAT_DOC = FamilyDoc(
    name=f"{COMPAT_PREFIX}<counter>",
    type="gauge",
    labels=("device", "port"),
    help="One gauge per hw counter of a port, named as `rdma statistic show` prints it "
    "(the original exporter's names; values are counters).",
    stability="stable",
)


def render_compat(ports: Iterable[RdmaPort]) -> str:
    """`rdma_stat_<counter>{device,port}` in the text format, one family per counter name."""
    families: dict[str, list[str]] = {}
    for port in ports:
        labels = f'{{device="{escape_label_value(port.device)}",port="{port.port}"}}'
        for counter, value in port.hw_counters:
            name = COMPAT_PREFIX + _NOT_NAME.sub("_", counter)
            lines = families.get(name)
            if lines is None:
                help = f"RDMA hw counter {counter} (rdma statistic)."
                lines = families[name] = [f"# HELP {name} {help}\n# TYPE {name} gauge\n"]
            lines.append(f"{name}{labels} {format_value(value)}\n")
    return "".join(line for lines in families.values() for line in lines)
