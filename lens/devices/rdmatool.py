"""The `rdma` CLI (iproute2) as a fallback source: parsers for `dev`, `link` and `statistic`.

Used only when /sys/class/infiniband is not visible (rdma.py decides). Both output forms are
read (shared/formats/rdma.md): compact JSON with -j, and text (`0: mlx5_0: node_type ca ...`,
`link mlx5_0/1 state ACTIVE ...`, `link mlx5_0/1` followed by indented `name value` lines).
The tool's physical states (`LINK_UP`) are translated to sysfs' spelling (`LinkUp`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from lens.devices.ib import RdmaDevice, RdmaPort, RdmaSnapshot
from lens.devices.tools import ToolRunner
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


def _json_list(text: str, what: str) -> list[dict[str, Any]]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise errors.SourceError(f"rdma {what} printed malformed JSON: {exc.msg}") from exc
    if not isinstance(document, list):  # callers only pass text that starts with "["
        return []
    return [item for item in document if isinstance(item, dict)]


def _words(line: str) -> dict[str, str]:
    """`key value key value ...` -> {key: value}."""
    tokens = line.split()
    return dict(zip(tokens[::2], tokens[1::2], strict=False))


def parse_dev(text: str) -> list[RdmaDevice]:
    """`rdma dev show`, JSON or text, -> devices in kernel index order."""
    if text.lstrip().startswith("["):
        items = [
            (int(d.get("ifindex", i)), str(d["ifname"]), d)
            for i, d in enumerate(_json_list(text, "dev"))
            if "ifname" in d
        ]
    else:
        items = []
        for line in text.splitlines():
            index, _, rest = line.partition(": ")
            name, _, fields = rest.partition(": ")
            if index.strip().isdigit() and name:
                items.append((int(index), name.strip(), _words(fields)))
    return [
        RdmaDevice(
            name=name,
            index=index,
            node_type=NODE_TYPES.get(str(d.get("node_type", "")), d.get("node_type")),
            fw_version=d.get("fw"),
            node_guid=d.get("node_guid"),
            sys_image_guid=d.get("sys_image_guid"),
        )
        for index, name, d in sorted(items, key=lambda item: item[0])
    ]


def _port(value: object) -> int:
    """A port number as the tool printed it; 1 (the only port of most devices) when it is no
    number, so one odd field never drops the line."""
    text = str(value)
    return int(text) if text.isdigit() else 1


def parse_link(text: str) -> list[RdmaPort]:
    """`rdma link show`, JSON or text, -> ports with state, physical state and netdev."""
    if text.lstrip().startswith("["):
        rows = [
            (str(link["ifname"]), _port(link.get("port", 1)), link)
            for link in _json_list(text, "link")
            if "ifname" in link
        ]
    else:
        rows = []
        for line in text.splitlines():
            words = line.split(None, 2)
            if len(words) < 2 or words[0] != "link":
                continue  # not a port line, or one cut short
            device, _, port = words[1].partition("/")
            rows.append((device, _port(port or 1), _words(words[2] if len(words) > 2 else "")))
    return [
        RdmaPort(
            device=device,
            port=port,
            state=fields.get("state"),
            physical_state=PHYSICAL_STATES.get(str(fields.get("physical_state"))),
            netdev=fields.get("netdev"),
        )
        for device, port, fields in rows
    ]


def parse_statistic(text: str) -> dict[tuple[str, int], dict[str, int]]:
    """`rdma statistic show`, JSON or text, -> counters by (device, port)."""
    counters: dict[tuple[str, int], dict[str, int]] = {}
    if text.lstrip().startswith("["):
        for item in _json_list(text, "statistic"):
            if "ifname" not in item:
                continue
            key = (str(item["ifname"]), int(item.get("port", 1)))
            counters[key] = {
                k: v for k, v in item.items() if isinstance(v, int) and k not in ("port", "ifindex")
            }
        return counters
    for chunk in text.split("link ")[1:]:
        tokens = chunk.split()
        if not tokens:
            continue
        device, _, port = tokens[0].partition("/")
        values = counters.setdefault((device, int(port) if port.isdigit() else 1), {})
        for name, value in zip(tokens[1::2], tokens[2::2], strict=False):
            if value.isdigit():
                values[name] = int(value)
    return counters


class RdmaToolReader:
    """Builds an RdmaSnapshot from the `rdma` tool (a fallback; spawns three processes)."""

    def __init__(self, runner: ToolRunner, *, tool: str = "rdma") -> None:
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
