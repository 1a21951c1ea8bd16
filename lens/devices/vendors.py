"""Which GPU vendors a node has, from PCI ids in sysfs, whether or not their driver is loaded.

The node agent runs a vendor's collector only where that vendor's GPUs are on the bus, so an
AMD node reports nothing about NVIDIA and the reverse; a GPU whose driver failed still counts,
and its collector then fails loudly instead of the node looking GPU-less.
"""

from __future__ import annotations

import threading

from lens.devices.gpu import Vendor
from lens.devices.sysfs import HostFiles, ReadError, parse_int

PCI_VENDORS: dict[int, Vendor] = {0x1002: "amd", 0x10DE: "nvidia"}
# PCI base classes of GPUs: 0x03 display controller, 0x12 processing accelerator (MI300).
GPU_BASE_CLASSES = frozenset({0x03, 0x12})


def is_gpu(vendor_id: int | None, class_code: int | None) -> bool:
    return (
        vendor_id in PCI_VENDORS and class_code is not None and class_code >> 16 in GPU_BASE_CLASSES
    )


def detect_gpu_vendors(host: HostFiles) -> frozenset[Vendor]:
    """Vendors with at least one GPU among /sys/bus/pci/devices, or among the devices of
    /sys/class/drm's cards where the bus's directory is missing or unreadable (some hardened
    or containerised hosts show one and not the other)."""
    found: set[Vendor] = set()
    for device in _pci_devices(host):
        vendor_id = parse_int(host.read_text(f"{device}/vendor"))
        if vendor_id not in PCI_VENDORS or PCI_VENDORS[vendor_id] in found:
            continue
        if is_gpu(vendor_id, parse_int(host.read_text(f"{device}/class"))):
            found.add(PCI_VENDORS[vendor_id])
    return frozenset(found)


def _pci_devices(host: HostFiles) -> list[str]:
    on_bus = [f"/sys/bus/pci/devices/{address}" for address in host.list("/sys/bus/pci/devices")]
    try:
        listed = host.list("/sys/class/drm")
    except ReadError:
        listed = []  # a node that is no GPU node at all, as the bus already said
    cards = [
        f"/sys/class/drm/{card}/device"
        for card in listed
        if card.startswith("card") and card[4:].isdigit()
    ]
    return on_bus + cards


class VendorPresence:
    """Which GPU vendors are on the bus; detected again with the static facts."""

    def __init__(self, host: HostFiles) -> None:
        self._host = host
        self._lock = threading.Lock()
        self._present: frozenset[Vendor] = frozenset()

    def refresh(self) -> frozenset[Vendor]:
        found = detect_gpu_vendors(self._host)
        with self._lock:
            self._present = found
        return found

    def present(self, vendor: Vendor) -> bool:
        with self._lock:
            return vendor in self._present

    def found(self) -> frozenset[Vendor]:
        """Every vendor found by the last detection."""
        with self._lock:
            return self._present
