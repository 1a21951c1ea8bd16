"""The RDMA collector: devices and per-port counters from /sys/class/infiniband each cycle.

Formats per shared/formats/rdma.md: `4: ACTIVE`, `5: LinkUp`, `400 Gb/sec (4X NDR)`, GUIDs as
four hex groups; PMA data counters in 4-byte words (a 32-bit counter stuck at 2^32-1 has
saturated and is left out); hw_counters enumerated, never hard-coded. Devices map to their
uverbs char devices through /sys/class/infiniband_verbs. When sysfs shows no devices and a
fallback is given (rdmatool.py), the `rdma` CLI is read instead. ib.py holds the data model.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable
from typing import ClassVar

from lens.devices.ib import RdmaDevice, RdmaPort, RdmaSnapshot
from lens.devices.sysfs import HostFiles, ReadError, parse_int, parse_key_values
from lens.runtime import errors

log = logging.getLogger(__name__)

IB_CLASS = "/sys/class/infiniband"
VERBS_CLASS = "/sys/class/infiniband_verbs"
SATURATED_32 = 2**32 - 1
RELIST_EVERY = 60  # collections between re-reads of the port and counter directory listings
_NOT_COUNTERS = frozenset({"lifespan"})


def parse_enum(text: str | None) -> str | None:
    """`4: ACTIVE` / `1: CA` -> `ACTIVE` / `CA`."""
    if not text:
        return None
    _number, found, name = text.partition(":")
    return name.strip() if found else text.strip()


def parse_rate(text: str | None) -> float | None:
    """`400 Gb/sec (4X NDR)` or `2.5 Gb/sec (1X SDR)` -> bytes per second; None when the
    number is none or too large to be a rate (a float overflows to infinity)."""
    match = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec", text or "")
    rate = float(match.group(1)) * 1e9 / 8 if match else None
    return rate if rate is not None and math.isfinite(rate) else None


def parse_port(name: str) -> int | None:
    """A port directory's number ("1"); None for any other entry."""
    if not name.isascii() or not name.isdigit() or len(name) > 10:
        return None
    return int(name)


def is_counter_name(name: str) -> bool:
    """Whether `name` is spelled as the kernel names counters (`rx_write_requests`,
    `VL15_dropped`): any other becomes a metric name or help text only garbled, or two
    counters one (`a-b` and `a_b` are both `rdma_stat_a_b`)."""
    return 0 < len(name) <= 128 and name.isascii() and name.replace("_", "a").isalnum()


Fallback = Callable[[], RdmaSnapshot]


class RdmaCollector:
    name: ClassVar[str] = "rdma"

    def __init__(self, host: HostFiles, *, fallback: Fallback | None = None) -> None:
        self._host = host
        self._fallback = fallback
        self._static: dict[str, RdmaDevice] = {}
        self._listings: dict[str, list[str]] = {}
        self._collections = 0
        self._falling_back = False

    def collect(self) -> RdmaSnapshot:
        names = self._host.list(IB_CLASS)
        if not names:
            return self._from_fallback()
        if self._falling_back:
            log.info("reading RDMA devices from sysfs again")
            self._falling_back = False
        self._collections += 1
        if self._collections % RELIST_EVERY == 0:
            self._listings.clear()
        verbs = self._uverbs()
        problems: list[str] = []
        devices = tuple(
            self._device(index, name, verbs.get(name, ()), problems)
            for index, name in enumerate(names)
        )
        self._host.sweep()
        return RdmaSnapshot(devices=devices, source="sysfs", problems=tuple(problems))

    def _from_fallback(self) -> RdmaSnapshot:
        if self._fallback is None:
            raise errors.NoDataError(f"no RDMA devices under {IB_CLASS}")
        if not self._falling_back:
            log.warning("no RDMA devices in sysfs; reading them with the rdma tool")
            self._falling_back = True
        return self._fallback()

    def _uverbs(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for entry in self._host.list(VERBS_CLASS):
            if not entry.startswith("uverbs"):
                continue  # abi_version
            device = self._host.read_text(f"{VERBS_CLASS}/{entry}/ibdev")
            if device:
                found.setdefault(device, []).append(entry)
        return {device: tuple(sorted(entries)) for device, entries in found.items()}

    def _device(
        self, index: int, name: str, uverbs: tuple[str, ...], problems: list[str]
    ) -> RdmaDevice:
        base = f"{IB_CLASS}/{name}"
        static = self._static.get(name)
        guid = self._host.read_text(f"{base}/node_guid")
        if static is None or static.node_guid != guid or static.index != index:
            static = self._static[name] = self._identify(index, name, guid)
            self._listings.clear()
        ports = tuple(
            self._port(name, port, static.netdevs, problems)
            for entry in self._list(f"{base}/ports")
            if (port := parse_port(entry)) is not None
        )
        return dataclasses.replace(static, uverbs=uverbs, ports=ports)

    def _identify(self, index: int, name: str, guid: str | None) -> RdmaDevice:
        base, read = f"{IB_CLASS}/{name}", self._host.read_text
        uevent = parse_key_values(read(f"{base}/device/uevent"))
        numa = parse_int(read(f"{base}/device/numa_node"))
        return RdmaDevice(
            name=name,
            index=index,
            node_type=parse_enum(read(f"{base}/node_type")),
            fw_version=read(f"{base}/fw_ver") or None,
            node_guid=guid,
            sys_image_guid=read(f"{base}/sys_image_guid"),
            hca_type=read(f"{base}/hca_type") or None,
            board_id=read(f"{base}/board_id") or None,
            pci_bus_id=uevent.get("PCI_SLOT_NAME", "").lower() or None,
            numa_node=numa if numa is not None and numa >= 0 else None,
            netdevs=tuple(self._host.list(f"{base}/device/net")),
        )

    def _port(
        self, device: str, port: int, netdevs: tuple[str, ...], problems: list[str]
    ) -> RdmaPort:
        base, read = f"{IB_CLASS}/{device}/ports/{port}", self._host.read_text
        link_layer = read(f"{base}/link_layer")
        netdev = read(f"{base}/gid_attrs/ndevs/0") if link_layer == "Ethernet" else None
        values = self._counters(f"{base}/counters", problems)

        def take(counter: str, per_unit: int = 1) -> int | None:
            value = values.pop(counter, None)
            if value == SATURATED_32:
                problems.append(f"{device}/{port}: {counter} saturated at 2^32-1")
                return None
            return None if value is None else value * per_unit

        data = (take("port_xmit_data", 4), take("port_rcv_data", 4))
        packets = (take("port_xmit_packets"), take("port_rcv_packets"))
        return RdmaPort(
            device=device,
            port=port,
            state=parse_enum(read(f"{base}/state")),
            physical_state=parse_enum(read(f"{base}/phys_state")),
            rate_bytes_per_second=parse_rate(read(f"{base}/rate")),
            link_layer=link_layer,
            netdev=netdev or (netdevs[0] if len(netdevs) == 1 else None),
            transmit_bytes=data[0],
            receive_bytes=data[1],
            transmit_packets=packets[0],
            receive_packets=packets[1],
            counters=tuple(sorted(values.items())),
            hw_counters=tuple(sorted(self._counters(f"{base}/hw_counters", problems).items())),
        )

    def _list(self, directory: str) -> list[str]:
        """A directory's entries, listed again only every RELIST_EVERY collections."""
        entries = self._listings.get(directory)
        if entries is None:
            entries = self._listings[directory] = self._host.list(directory)
        return entries

    def _counters(self, directory: str, problems: list[str]) -> dict[str, int]:
        values = {}
        for name in self._list(directory):
            if name in _NOT_COUNTERS or not is_counter_name(name):
                continue
            try:
                text = self._host.read_text(f"{directory}/{name}")
            except ReadError as exc:
                problems.append(str(exc))  # mlx5 answers EINVAL for some counters when down
                continue
            value = parse_int(text)
            if value is not None:
                values[name] = value
        return values
