"""DRI device nodes: which /dev/dri/cardN and renderDN belong to which GPU (and partition).

Read from udev's /dev/dri/by-path links (`pci-<address>-card|render` for any PCI domain,
`platform-amdgpu_xcp.<n>-card|render` for compute partitions), each node's driver from sysfs,
and a partition's GPU from the KFD topology (its render minor, PCI location and domain).
Container attribution and the REST /v1/driMapping read the DriMapping this returns.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import ClassVar

from lens.devices.sysfs import HostFiles, parse_int, parse_key_values
from lens.runtime import errors

BY_PATH = "/dev/dri/by-path"
KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"

_PCI_LINK = re.compile(
    r"^pci-([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])-(card|render)$"
)
_PLATFORM_LINK = re.compile(r"^platform-(.+)-(card|render)$")
_RENDER_MINOR = re.compile(r"renderD(\d+)$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DriNode:
    """A card/render pair of one GPU, or of one of its compute partitions."""

    pci_bus_id: str  # the GPU's PCI address; "" when a partition's GPU is unknown
    card: str | None  # host path, e.g. /dev/dri/card1
    render: str | None  # host path, e.g. /dev/dri/renderD128
    driver: str  # amdgpu, nvidia, ast, ...
    partition: int | None  # 0: the GPU's own nodes; n >= 1: compute partition n
    platform: str | None = None  # amdgpu_xcp.<n> for a partition's nodes


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DriMapping:
    nodes: tuple[DriNode, ...]
    kfd: str | None  # /dev/kfd when the ROCm compute interface is present

    def of_gpu(self, pci_bus_id: str) -> tuple[DriNode, ...]:
        """The GPU's nodes, its own first, then its partitions in order."""
        return tuple(n for n in self.nodes if n.pci_bus_id == pci_bus_id)


def location_to_bdf(domain: int, location_id: int) -> str:
    """KFD's (domain, location_id = bus << 8 | device << 3 | function) -> 0000:0c:00.0."""
    bus, devfn = location_id >> 8, location_id & 0xFF
    return f"{domain:04x}:{bus:02x}:{devfn >> 3:02x}.{devfn & 7}"


def parse_kfd_properties(text: str | None) -> tuple[int, str] | None:
    """A KFD topology node's (render minor, PCI address); None for CPU nodes."""
    properties = parse_key_values(text, " ")
    minor = parse_int(properties.get("drm_render_minor"))
    location = parse_int(properties.get("location_id"))
    domain = parse_int(properties.get("domain", "0"))
    if minor is None or location is None or domain is None or not properties.get("vendor_id"):
        return None
    # A render minor is positive; the PCI location is 16 bits, the domain 32: anything else
    # is no GPU's address.
    if minor <= 0 or not 0 <= location <= 0xFFFF or not 0 <= domain <= 0xFFFFFFFF:
        return None
    return minor, location_to_bdf(domain, location)


class DriCollector:
    name: ClassVar[str] = "dri"

    def __init__(self, host: HostFiles) -> None:
        self._host = host

    def collect(self) -> DriMapping:
        links = self._links()
        if not links:
            raise errors.NoDataError(f"no DRM nodes under {BY_PATH}")
        minors = self._kfd_render_minors()
        nodes = [self._node(key, paths, minors) for key, paths in sorted(links.items())]
        return DriMapping(
            nodes=tuple(_number_partitions(nodes)),
            kfd="/dev/kfd" if self._host.exists("/dev/kfd") else None,
        )

    def _links(self) -> dict[tuple[str, str], dict[str, str]]:
        """(kind pci|platform, id) -> {"card": path, "render": path} from the by-path links."""
        links: dict[tuple[str, str], dict[str, str]] = {}
        for entry in self._host.list(BY_PATH):
            pci, platform = _PCI_LINK.match(entry), _PLATFORM_LINK.match(entry)
            match = pci or platform
            target = self._host.link_target(f"{BY_PATH}/{entry}")
            if match is None or target is None:
                continue
            key = ("pci", _normalize_bdf(match.group(1))) if pci else ("platform", match.group(1))
            path = posixpath.normpath(posixpath.join(BY_PATH, target))
            links.setdefault(key, {})[match.group(2)] = path
        return links

    def _kfd_render_minors(self) -> dict[int, str]:
        minors = {}
        for node in self._host.list(KFD_NODES):
            parsed = parse_kfd_properties(self._host.read_text(f"{KFD_NODES}/{node}/properties"))
            if parsed is not None:
                minors[parsed[0]] = parsed[1]
        return minors

    def _node(self, key: tuple[str, str], paths: dict[str, str], minors: dict[int, str]) -> DriNode:
        kind, ident = key
        card, render = paths.get("card"), paths.get("render")
        any_node = posixpath.basename(card or render or "")
        uevent = parse_key_values(self._host.read_text(f"/sys/class/drm/{any_node}/device/uevent"))
        if kind == "pci":
            return DriNode(
                pci_bus_id=ident,
                card=card,
                render=render,
                driver=uevent.get("DRIVER", ""),
                partition=0,
            )
        minor = _RENDER_MINOR.search(render or "")
        gpu = minors.get(int(minor.group(1))) if minor else None
        return DriNode(
            pci_bus_id=gpu or "",
            card=card,
            render=render,
            driver=uevent.get("DRIVER", ""),
            partition=None,
            platform=ident,
        )


def _normalize_bdf(address: str) -> str:
    domain, _, rest = address.lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}"


def _render_minor(node: DriNode) -> int:
    match = _RENDER_MINOR.search(node.render or "")
    return int(match.group(1)) if match else 1 << 30


def _number_partitions(nodes: list[DriNode]) -> list[DriNode]:
    """Partitions of a GPU numbered 1.. in render-minor order, after the GPU's own nodes."""
    numbered = []
    counts: dict[str, int] = {}
    for node in sorted(nodes, key=lambda n: (n.platform is not None, _render_minor(n))):
        if node.platform is not None and node.pci_bus_id:
            counts[node.pci_bus_id] = counts.get(node.pci_bus_id, 0) + 1
            node = dataclasses.replace(node, partition=counts[node.pci_bus_id])
        numbered.append(node)
    return sorted(numbered, key=lambda n: (n.pci_bus_id, n.partition if n.partition else 0))
