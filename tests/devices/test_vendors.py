"""GPU vendors are told from PCI ids: AMD and NVIDIA GPUs, not the BMC's display or NICs."""

from __future__ import annotations

import shutil
from pathlib import Path

from lens.devices import vendors
from lens.devices.sysfs import HostFiles
from lens.sim.hosts.tree import HostTree


def test_is_gpu() -> None:
    assert vendors.is_gpu(0x1002, 0x120000), "MI300X: processing accelerator"
    assert vendors.is_gpu(0x1002, 0x038000) and vendors.is_gpu(0x10DE, 0x030200)
    assert not vendors.is_gpu(0x1002, 0x040300), "HDMI audio of an AMD card"
    assert not vendors.is_gpu(0x1A03, 0x030000), "the BMC's ASPEED display"
    assert not vendors.is_gpu(0x15B3, 0x020700) and not vendors.is_gpu(None, None)


def test_an_amd_node(mi300x: HostTree) -> None:
    assert vendors.detect_gpu_vendors(HostFiles(mi300x.root)) == {"amd"}


def test_an_nvidia_node(h100: HostTree) -> None:
    assert vendors.detect_gpu_vendors(HostFiles(h100.root)) == {"nvidia"}


def test_both_vendors_on_one_node(mi300x: HostTree, tmp_path: Path) -> None:
    nvidia = mi300x.root / "sys/bus/pci/devices/0000:f1:00.0"
    nvidia.mkdir()
    (nvidia / "vendor").write_text("0x10de\n")
    (nvidia / "class").write_text("0x030200\n")
    assert vendors.detect_gpu_vendors(HostFiles(mi300x.root)) == {"amd", "nvidia"}


def test_without_the_pci_bus_directory_the_drm_cards_tell(mi300x: HostTree) -> None:
    """Issue 17, point 4: a host whose /sys/bus/pci/devices is missing showed 0 GPUs."""
    shutil.rmtree(mi300x.root / "sys/bus/pci/devices")
    assert vendors.detect_gpu_vendors(HostFiles(mi300x.root)) == {"amd"}


def test_a_node_without_sysfs(tmp_path: Path) -> None:
    assert vendors.detect_gpu_vendors(HostFiles(tmp_path)) == frozenset()


def test_vendor_presence_follows_the_bus(mi300x: HostTree) -> None:
    presence = vendors.VendorPresence(HostFiles(mi300x.root))
    assert not presence.present("amd"), "nothing before the first refresh"
    assert presence.refresh() == {"amd"}
    assert presence.present("amd") and not presence.present("nvidia")
