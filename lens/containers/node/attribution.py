"""Which GPUs and RDMA devices a container holds, from the device numbers in its OCI spec.

A device node is identified by its (major, minor) number, never by its path or an index guessed
from its name: the node agent passes a lookup built from sysfs (devices/devnodes.py), where
/sys/class/drm/<node>/dev and /sys/class/infiniband_verbs/uverbsN/dev give each node's number.
A GPU's card and render nodes count once; /dev/kfd and rdma_cm add no device of their own, as
the GPUs a container may use through /dev/kfd are those its render nodes name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from lens.containers.model import Device, DeviceType
from lens.containers.node.spec import SpecDevice


class KnownDevice(Protocol):
    """A host device a node number belongs to, as the node agent knows it."""

    @property
    def type(self) -> DeviceType: ...

    @property
    def name(self) -> str: ...

    @property
    def number(self) -> int: ...

    @property
    def uuid(self) -> str: ...


DeviceLookup = Callable[[int, int], KnownDevice | None]


def attribute(spec_devices: Iterable[SpecDevice], lookup: DeviceLookup) -> tuple[Device, ...]:
    """The GPUs then RDMA devices behind a container's device nodes, each once, by number."""
    found: dict[tuple[str, str, int], Device] = {}
    for node in spec_devices:
        if node.type != "c":
            continue
        known = lookup(node.major, node.minor)
        if known is None:
            continue
        key = (known.type, known.uuid, known.number)
        if key not in found:
            found[key] = Device(
                type=known.type,
                name=known.name,
                number=known.number,
                uuid=known.uuid,
                path=node.path,
            )
    return tuple(sorted(found.values(), key=lambda d: (d.type != "gpu", d.number, d.uuid)))


def with_allocated_gpus(
    devices: tuple[Device, ...], allocated: Sequence[KnownDevice]
) -> tuple[Device, ...]:
    """`devices` with its GPUs replaced by those the kubelet allocated (RDMA devices kept).

    A GPU also found in the spec keeps its device path; one only the kubelet names (NVIDIA's
    runtime adds device nodes the spec does not list) has none.
    """
    in_spec = {(d.uuid, d.number): d for d in devices if d.type == "gpu"}
    gpus: dict[tuple[str, int], Device] = {}
    for known in allocated:
        if known.type != "gpu":
            continue
        key = (known.uuid, known.number)
        gpus[key] = in_spec.get(key) or Device(
            type="gpu", name=known.name, number=known.number, uuid=known.uuid
        )
    merged = (*gpus.values(), *(d for d in devices if d.type != "gpu"))
    return tuple(sorted(merged, key=lambda d: (d.type != "gpu", d.number, d.uuid)))
