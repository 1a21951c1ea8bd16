"""Device numbers (major:minor) of a node's GPU and RDMA device nodes, read from sysfs.

Container attribution (containers/node/attribution.py) looks up each device node of a container's
OCI spec here: DRM card and render nodes by /sys/class/drm/<node>/dev, NVIDIA's /dev/nvidiaN by
its fixed major 195, uverbs nodes by /sys/class/infiniband_verbs/uverbsN/dev. The GPUs, DRI
mapping and RDMA devices come from the node agent's last collections.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Sequence
from typing import Literal

from lens.devices.dri import DriMapping
from lens.devices.gpu import GpuSnapshot
from lens.devices.ib import RdmaSnapshot
from lens.devices.sysfs import HostFiles

NVIDIA_MAJOR = 195  # /dev/nvidiaN is 195:N (kernel devices.txt)
_DEV = re.compile(r"^\s*([0-9]{1,10}):([0-9]{1,10})\s*$")  # 12- and 20-bit numbers
_NVIDIA_CARD = re.compile(r"^nvidia(\d+)$")

DeviceNumber = tuple[int, int]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeDevice:
    """The host device behind a device number."""

    type: Literal["gpu", "ib"]
    name: str  # GPU model or RDMA device name
    number: int  # GPU index or RDMA device index
    uuid: str  # GPU UUID or RDMA node GUID


def parse_dev(text: str | None) -> DeviceNumber | None:
    """A sysfs `dev` file ("226:128\\n") as (major, minor)."""
    match = _DEV.match(text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def read_device_numbers(
    host: HostFiles,
    *,
    gpus: Sequence[GpuSnapshot],
    dri: DriMapping | None,
    rdma: RdmaSnapshot | None,
) -> dict[DeviceNumber, NodeDevice]:
    """Every GPU and RDMA device node of the host by its number."""
    table: dict[DeviceNumber, NodeDevice] = {}
    for gpu in gpus:
        device = NodeDevice(type="gpu", name=gpu.model, number=gpu.index, uuid=gpu.uuid)
        nvidia = _NVIDIA_CARD.match(gpu.card)
        if nvidia:
            table[(NVIDIA_MAJOR, int(nvidia.group(1)))] = device
        for node in dri.of_gpu(gpu.pci_bus_id) if dri is not None else ():
            for path in (node.card, node.render):
                number = _drm_number(host, path)
                if number is not None:
                    table[number] = device
    for rdma_device in rdma.devices if rdma is not None else ():
        device = NodeDevice(
            type="ib",
            name=rdma_device.name,
            number=rdma_device.index,
            uuid=rdma_device.node_guid or rdma_device.name,
        )
        for uverbs in rdma_device.uverbs:
            number = parse_dev(host.read_text(f"/sys/class/infiniband_verbs/{uverbs}/dev"))
            if number is not None:
                table[number] = device
    return table


def _drm_number(host: HostFiles, path: str | None) -> DeviceNumber | None:
    if not path:
        return None
    return parse_dev(host.read_text(f"/sys/class/drm/{posixpath.basename(path)}/dev"))


def gpus_by_allocation_id(gpus: Sequence[GpuSnapshot]) -> dict[str, NodeDevice]:
    """Each GPU under the ids device plugins allocate it by: its PCI address (AMD) and its UUID
    (NVIDIA), lower case (shared/formats/kubelet.md section 4)."""
    table: dict[str, NodeDevice] = {}
    for gpu in gpus:
        device = NodeDevice(type="gpu", name=gpu.model, number=gpu.index, uuid=gpu.uuid)
        for key in (gpu.pci_bus_id, gpu.uuid):
            if key:
                table[key.lower()] = device
    return table


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceIndex:
    """A node's GPUs and RDMA devices by device number and by device-plugin allocation id:
    what container attribution looks devices up in (the node agent and `lens containers`)."""

    by_number: dict[DeviceNumber, NodeDevice]
    by_allocation_id: dict[str, NodeDevice]


def index_devices(
    host: HostFiles,
    *,
    gpus: Sequence[GpuSnapshot],
    dri: DriMapping | None,
    rdma: RdmaSnapshot | None,
) -> DeviceIndex:
    """The DeviceIndex of the collected GPUs, DRI nodes and RDMA devices."""
    return DeviceIndex(
        by_number=read_device_numbers(host, gpus=gpus, dri=dri, rdma=rdma),
        by_allocation_id=gpus_by_allocation_id(gpus),
    )
