"""The `rdma` CLI (iproute2) as a fallback source: parsers for `dev`, `link` and `statistic`.

Used only when /sys/class/infiniband is not visible (rdma.py decides). Both output forms are
read (shared/formats/rdma.md): compact JSON with -j, and text (`0: mlx5_0: node_type ca ...`,
`link mlx5_0/1 state ACTIVE ...`, `link mlx5_0/1` followed by indented `name value` lines).
The tool's physical states (`LINK_UP`) are translated to sysfs' spelling (`LinkUp`). A field
of the wrong type or out of range (1e999, a list) is unknown; the rest of its line is kept.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lens.devices import rdma, tooljson
from lens.devices.ib import RdmaDevice, RdmaPort, RdmaSnapshot
from lens.devices.tools import Runner
from lens.runtime import errors

PHYSICAL_STATES = {
    "SLEEP": "Sleep",
    "POLLING": "Polling",
    "DISABLED": "Disabled",
    "ARMED": "PortConfigurationTraining",
    "LINK_UP": "LinkUp",
    "LINK_ERROR_RECOVER": "LinkErrorRecovery",
    "PHY_TEST": "Phy Test",
}
NODE_TYPES = {"ca": "CA", "rnic": "RNIC", "usnic": "usNIC", "usnic_udp": "usNIC UDP"}
PORT_MOST = 2**32 - 1  # the kernel's port numbers are u32
COUNTER_MOST = 2**64 - 1  # and its counters u64


def _json_list(text: str, what: str) -> list[dict[str, Any]]:
    document = tooljson.document(text, f"rdma {what}")
    if not isinstance(document, list):  # callers only pass text that starts with "["
        return []
    return [item for item in document if isinstance(item, dict)]


def _number(text: str, most: int) -> int | None:
    """A decimal number of at most `most` as the text form prints it ("12"), else None."""
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        return None
    value = int(text)
    return value if value <= most else None


def _words(line: str) -> dict[str, str]:
    """`key value key value ...` -> {key: value}."""
    tokens = line.split()
    return dict(zip(tokens[::2], tokens[1::2], strict=False))


def _dev_items(text: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, name, fields) of each device `rdma dev show` printed, JSON or text."""
    items: list[tuple[int, str, dict[str, Any]]] = []
    if text.lstrip().startswith("["):
        for position, device in enumerate(_json_list(text, "dev")):
            name = tooljson.text(device.get("ifname"))
            index = tooljson.integer(device.get("ifindex"), lowest=0, highest=PORT_MOST)
            if name is not None:
                items.append((position if index is None else index, name, device))
        return items
    for line in text.splitlines():
        first, _, rest = line.partition(": ")
        written, _, fields = rest.partition(": ")
        number, label = _number(first.strip(), PORT_MOST), tooljson.clean(written).strip()
        if number is not None and label:
            items.append((number, label, _words(fields)))
    return items


def parse_dev(text: str) -> list[RdmaDevice]:
    """`rdma dev show`, JSON or text, -> devices in kernel index order."""
    devices = []
    for index, name, fields in sorted(_dev_items(text), key=lambda item: item[0]):
        node_type = tooljson.text(fields.get("node_type"))
        devices.append(
            RdmaDevice(
                name=name,
                index=index,
                node_type=NODE_TYPES.get(node_type or "", node_type),
                fw_version=tooljson.text(fields.get("fw")),
                node_guid=tooljson.text(fields.get("node_guid")),
                sys_image_guid=tooljson.text(fields.get("sys_image_guid")),
            )
        )
    return devices


def _port(value: object) -> int:
    """A port number as the tool printed it; 1 (the only port of most devices) when it is no
    number, so one odd field never drops the line."""
    number = tooljson.integer(value, lowest=0, highest=PORT_MOST)
    return 1 if number is None else number


def parse_link(text: str) -> list[RdmaPort]:
    """`rdma link show`, JSON or text, -> ports with state, physical state and netdev."""
    if text.lstrip().startswith("["):
        rows = [
            (name, _port(link.get("port", 1)), link)
            for link in _json_list(text, "link")
            if (name := tooljson.text(link.get("ifname"))) is not None
        ]
    else:
        rows = []
        for line in text.splitlines():
            words = line.split(None, 2)
            if len(words) < 2 or words[0] != "link":
                continue  # not a port line, or one cut short
            device, _, port = tooljson.clean(words[1]).partition("/")
            rows.append((device, _port(port or 1), _words(words[2] if len(words) > 2 else "")))
    return [
        RdmaPort(
            device=device,
            port=port,
            state=tooljson.text(fields.get("state")),
            physical_state=PHYSICAL_STATES.get(tooljson.text(fields.get("physical_state")) or ""),
            netdev=tooljson.text(fields.get("netdev")),
        )
        for device, port, fields in rows
    ]


def parse_statistic(text: str) -> dict[tuple[str, int], dict[str, int]]:
    """`rdma statistic show`, JSON or text, -> counters by (device, port)."""
    counters: dict[tuple[str, int], dict[str, int]] = {}
    if text.lstrip().startswith("["):
        for item in _json_list(text, "statistic"):
            device = tooljson.text(item.get("ifname"))
            if device is None:
                continue
            values = counters.setdefault((device, _port(item.get("port", 1))), {})
            for name, value in item.items():
                # A counter is a u64 in JSON; a string, float or 1e999 is no counter.
                if name in ("port", "ifindex") or type(value) is not int:
                    continue
                if 0 <= value <= COUNTER_MOST and rdma.is_counter_name(name):
                    values[name] = value
        return counters
    for chunk in text.split("link ")[1:]:
        tokens = chunk.split()
        if not tokens:
            continue
        device, _, port = tooljson.clean(tokens[0]).partition("/")
        values = counters.setdefault((device, _port(port or 1)), {})
        for name, value in zip(tokens[1::2], tokens[2::2], strict=False):
            number = _number(value, COUNTER_MOST)
            if number is not None and rdma.is_counter_name(name):
                values[name] = number
    return counters


class RdmaToolReader:
    """Builds an RdmaSnapshot from the `rdma` tool (a fallback; spawns three processes)."""

    def __init__(self, runner: Runner, *, tool: str = "rdma") -> None:
        self._runner = runner
        self._tool = tool

    def _show(self, what: str) -> str:
        try:
            return self._runner.run((self._tool, "-j", what, "show"))
        except errors.NoDataError:
            raise
        except errors.SourceError:
            return self._runner.run((self._tool, what, "show"))  # an iproute2 without -j

    def read(self) -> RdmaSnapshot:
        devices = parse_dev(self._show("dev"))
        if not devices:
            raise errors.NoDataError("the rdma tool lists no RDMA devices")
        links = parse_link(self._show("link"))
        problems: list[str] = []
        try:
            statistics = parse_statistic(self._show("statistic"))
        except errors.SourceError as exc:
            problems.append(f"rdma statistic: {exc}")
            statistics = {}
        by_device: dict[str, list[RdmaPort]] = {}
        for link in links:
            counters = statistics.get((link.device, link.port), {})
            port = RdmaPort(
                device=link.device,
                port=link.port,
                state=link.state,
                physical_state=link.physical_state,
                netdev=link.netdev,
                hw_counters=tuple(sorted(counters.items())),
            )
            by_device.setdefault(link.device, []).append(port)
        return RdmaSnapshot(
            devices=tuple(
                dataclasses.replace(d, ports=tuple(by_device.get(d.name, ()))) for d in devices
            ),
            source="rdma-tool",
            problems=tuple(problems),
        )
