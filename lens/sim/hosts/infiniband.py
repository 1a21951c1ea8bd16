"""RDMA sysfs of a simulated node: /sys/class/infiniband, uverbs, /dev/infiniband.

Formats follow shared/formats/rdma.md (Documentation/ABI/stable/sysfs-class-infiniband and
drivers/infiniband/core/sysfs.c): state "4: ACTIVE", phys_state "5: LinkUp", rate
"400 Gb/sec (4X NDR)", GUIDs as four colon-separated groups, and the PMA data counters
port_xmit_data / port_rcv_data in 4-byte words. hw_counters are mlx5's names (counters.c).
"""

from __future__ import annotations

from pathlib import Path

from lens.sim.hosts import amdgpu, files
from lens.sim.hosts.state import NicIdentity, PortReading

UVERBS_MAJOR = 231
UVERBS_MINOR_BASE = 192


def device_dir(root: Path, nic: NicIdentity) -> Path:
    return root / "sys/class/infiniband" / nic.name


def write_static(root: Path, nic: NicIdentity) -> None:
    pci = root / amdgpu.PCI_ROOT / nic.bdf
    files.write(pci / "vendor", "0x15b3\n")
    files.write(pci / "device", "0x1021\n")
    files.write(pci / "numa_node", f"{nic.numa_node}\n")
    files.write(pci / "class", "0x020000\n" if nic.link_layer == "Ethernet" else "0x020700\n")
    files.write(pci / "uevent", f"DRIVER=mlx5_core\nPCI_ID=15B3:1021\nPCI_SLOT_NAME={nic.bdf}\n")
    files.link(root / "sys/bus/pci/devices" / nic.bdf, pci)
    files.write(pci / "net" / nic.netdev / "ifindex", f"{10 + nic.index}\n")
    ib = pci / "infiniband" / nic.name
    files.link(root / "sys/class/infiniband" / nic.name, ib)
    files.link(ib / "device", pci)
    static = {
        "node_type": "1: CA",
        "node_guid": nic.node_guid,
        "sys_image_guid": nic.sys_image_guid,
        "fw_ver": nic.firmware,
        "hca_type": "MT4129",
        "hw_rev": "0x0",
        "board_id": "MT_0000000838",
        "node_desc": f"{nic.name} HCA-{nic.index + 1}",
    }
    for name, value in static.items():
        files.write(ib / name, f"{value}\n")
    port = ib / "ports/1"
    port_static = {
        "link_layer": nic.link_layer,
        "rate": nic.rate,
        "phys_state": "5: LinkUp",
        "lid": "0x0" if nic.link_layer == "Ethernet" else f"0x{nic.index + 10:x}",
        "sm_lid": "0x0" if nic.link_layer == "Ethernet" else "0x1",
        "lid_mask_count": "0",
        "cap_mask": "0x04010000",
        "hw_counters/lifespan": "10",
    }
    for name, value in port_static.items():
        files.write(port / name, f"{value}\n")
    if nic.link_layer == "Ethernet":
        files.write(port / "gid_attrs/ndevs/0", f"{nic.netdev}\n")
        files.write(port / "gid_attrs/types/0", "RoCE v2\n")
    verbs = pci / "infiniband_verbs" / f"uverbs{nic.uverbs}"
    files.write(verbs / "ibdev", f"{nic.name}\n")
    files.write(verbs / "abi_version", "1\n")
    files.write(verbs / "dev", f"{UVERBS_MAJOR}:{UVERBS_MINOR_BASE + nic.uverbs}\n")
    files.link(root / "sys/class/infiniband_verbs" / f"uverbs{nic.uverbs}", verbs)
    files.write(root / "sys/class/infiniband_verbs/abi_version", "6\n")
    files.device_node(root / "dev/infiniband" / f"uverbs{nic.uverbs}")
    files.device_node(root / "dev/infiniband/rdma_cm")


def write_readings(root: Path, nic: NicIdentity, reading: PortReading) -> None:
    port = device_dir(root, nic) / "ports/1"
    files.write(
        port / "state", f"4: {reading.state}\n" if reading.state == "ACTIVE" else "1: DOWN\n"
    )
    counters = {
        "port_xmit_data": reading.xmit_bytes // 4,
        "port_rcv_data": reading.rcv_bytes // 4,
        "port_xmit_packets": reading.xmit_packets,
        "port_rcv_packets": reading.rcv_packets,
        "unicast_xmit_packets": reading.xmit_packets,
        "unicast_rcv_packets": reading.rcv_packets,
        "multicast_xmit_packets": 0,
        "multicast_rcv_packets": 0,
        "symbol_error": 0,
        "port_rcv_errors": 0,
        "link_downed": 0,
        "link_error_recovery": 0,
        "port_xmit_discards": 0,
        "port_xmit_wait": reading.xmit_packets // 1000,
    }
    for name, value in counters.items():
        files.write(port / "counters" / name, f"{value}\n")
    for name, value in reading.hw_counters.items():
        files.write(port / "hw_counters" / name, f"{value}\n")
