"""Which labels of a Prometheus series name its node, its GPU (or RDMA device) or its pod, in the
names the exporters operators run use, and the normal forms their values are compared in.

relabeling.py parses each series with `parse_series`; index.py looks the result up. Sources:
NVIDIA dcgm-exporter (internal/pkg/rendermetrics, transformation/const.go), AMD
device-metrics-exporter (exporterconfig.proto: label enum names, lowercased), Lens's node agent
(docs/metrics.md), Primus-Lens (REFERENCE.md 10.1) and Prometheus, which renames a series' label
to `exported_<name>` when the scrape target carries a label of that name.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping

Labels = tuple[tuple[str, str], ...]  # sorted bytewise by name, no duplicates


class KeyKind(enum.Enum):
    """How a series names a device; the values are the kinds index.py keys devices by."""

    UUID = "uuid"
    PCI = "pci"
    SERIAL = "serial"
    INDEX = "index"
    RDMA = "rdma"  # an RDMA device by name (mlx5_0)


# The node, in order of trust: the original's own label; `node` (kube-prometheus' and Lens's
# relabelling of __meta_kubernetes_pod_node_name) and its renamed form; the exporters' host name
# (dcgm-exporter: `Hostname` until #655, `hostname` since; AMD: `hostname`).
NODE_LABELS = ("primus_lens_node_name", "node", "exported_node", "hostname", "Hostname")

# Each device label with the kind of key its value is, strongest first: a uuid or PCI address
# names one GPU wherever it is read; an index depends on who numbers the GPUs.
DEVICE_LABELS: tuple[tuple[str, KeyKind], ...] = (
    ("UUID", KeyKind.UUID),  # dcgm-exporter
    ("uuid", KeyKind.UUID),  # dcgm-exporter with --use-old-namespace; lens_gpu_info
    ("gpu_uuid", KeyKind.UUID),  # AMD (GPU_UUID); dcgm's NVLink series; lens_gpu_idle
    ("pci_bus_id", KeyKind.PCI),  # dcgm-exporter, Lens's agent
    ("serial_number", KeyKind.SERIAL),  # AMD (SERIAL_NUMBER, always exported)
    ("serial", KeyKind.SERIAL),  # Lens's agent
    ("gpu", KeyKind.INDEX),  # dcgm-exporter, Lens's agent
    ("gpu_id", KeyKind.INDEX),  # AMD (GPU_ID), the original (REFERENCE.md 10.1)
    ("device", KeyKind.RDMA),  # Lens's RDMA series, the original's ib/rdma devices; dcgm: nvidiaN
)

# A pod by uid: dcgm-exporter's `pod_uid`, AMD's POD_UUID, kube-state-metrics' `uid` (the
# original's fallback).
POD_UID_LABELS = ("pod_uid", "pod_uuid", "uid")

# A pod by (namespace label, pod label), first the exporter's own labels that a scrape renamed
# (the unrenamed ones then name the exporter's pod), then dcgm-exporter's and AMD's current names,
# then dcgm-exporter's old ones (also those of Lens's pod_ephemeral_storage_usage_bytes).
POD_NAME_LABELS: tuple[tuple[str, str], ...] = (
    ("exported_namespace", "exported_pod"),
    ("exported_namespace", "pod"),
    ("namespace", "pod"),
    ("pod_namespace", "pod_name"),
)

_NVIDIA_DEVICE = re.compile(r"nvidia([0-9]{1,4})")  # dcgm-exporter's `device`: /dev/nvidiaN
_HEX = re.compile(r"[0-9a-f]+")
_PCI_TAIL = re.compile(r"[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
_MAX_INDEX_DIGITS = 6
_MAX_VALUE = 256  # longer values name nothing Lens stores (its columns hold at most 253)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SeriesIdentity:
    """What a series' labels say about whom it concerns, each part in order of trust."""

    nodes: tuple[str, ...] = ()
    devices: tuple[tuple[KeyKind, str], ...] = ()  # normalised values
    pod_uids: tuple[str, ...] = ()
    pod_names: tuple[tuple[str, str], ...] = ()  # (namespace, name)


def parse_series(labels: Labels) -> SeriesIdentity | None:
    """The identifying parts of a series' labels; None when it names no pod and no device on a
    node (most series: nothing to look up)."""
    by_name = dict(labels)
    pod_uids = tuple(_present(by_name, POD_UID_LABELS))
    pod_names = tuple(
        (by_name[ns], by_name[pod])
        for ns, pod in POD_NAME_LABELS
        if by_name.get(ns) and by_name.get(pod) and len(by_name[pod]) <= _MAX_VALUE
    )
    nodes = tuple(dict.fromkeys(_present(by_name, NODE_LABELS)))
    devices = device_keys(by_name) if nodes else ()
    if not (pod_uids or pod_names or devices):
        return None
    return SeriesIdentity(nodes=nodes, devices=devices, pod_uids=pod_uids, pod_names=pod_names)


def device_keys(by_name: Mapping[str, str]) -> tuple[tuple[KeyKind, str], ...]:
    """The device keys among `by_name`'s labels, normalised, strongest first, each once."""
    keys: dict[tuple[KeyKind, str], None] = {}
    for label, kind in DEVICE_LABELS:
        value = by_name.get(label)
        if not value:
            continue
        key = _device_key(kind, value)
        if key is not None:
            keys[key] = None
    return tuple(keys)


def _device_key(kind: KeyKind, value: str) -> tuple[KeyKind, str] | None:
    if kind is KeyKind.RDMA:
        nvidia = _NVIDIA_DEVICE.fullmatch(value)
        if nvidia is not None:  # dcgm-exporter's device node: the GPU's minor number
            return KeyKind.INDEX, str(int(nvidia.group(1)))
        return (kind, value) if len(value) <= _MAX_VALUE else None
    normal = NORMALISERS[kind](value)
    return None if normal is None else (kind, normal)


def _present(by_name: Mapping[str, str], names: tuple[str, ...]) -> list[str]:
    return [v for n in names if (v := by_name.get(n)) and len(v) <= _MAX_VALUE]


def normal_uuid(value: str) -> str | None:
    """A GPU uuid compared without case and without NVIDIA's `GPU-` prefix."""
    text = value.strip().lower().removeprefix("gpu-")
    return text if 0 < len(text) <= _MAX_VALUE else None


def normal_pci(value: str) -> str | None:
    """A PCI address as sysfs writes it, `0000:3b:00.0`: NVML's eight-digit domain
    (`00000000:3B:00.0`) and a missing domain (`3b:00.0`) read alike; None if malformed."""
    parts = value.strip().lower().split(":")
    if len(parts) == 2:
        parts.insert(0, "0")
    if len(parts) != 3:
        return None
    domain, bus, function = parts
    if not (
        _HEX.fullmatch(domain) and len(domain) <= 8 and _PCI_TAIL.fullmatch(f"{bus}:{function}")
    ):
        return None
    return f"{int(domain, 16):04x}:{bus}:{function}"


def normal_serial(value: str) -> str | None:
    text = value.strip().lower()
    return text if 0 < len(text) <= _MAX_VALUE else None


def normal_index(value: str) -> str | None:
    """A GPU index in decimal without leading zeros; None if not a small whole number."""
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > _MAX_INDEX_DIGITS:
        return None
    return str(int(text))


NORMALISERS = {
    KeyKind.UUID: normal_uuid,
    KeyKind.PCI: normal_pci,
    KeyKind.SERIAL: normal_serial,
    KeyKind.INDEX: normal_index,
}
