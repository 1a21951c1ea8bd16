"""DRM device nodes of a simulated node: /sys/class/drm, /dev/dri with by-path links, KFD.

Follows shared/formats/amdgpu-sysfs.md section 4: udev's 60-drm.rules names by-path links
`pci-<bdf>-card` and `pci-<bdf>-render`, partitions are platform devices `amdgpu_xcp.<n>` with
their own card and render nodes, and KFD topology nodes carry drm_render_minor, location_id and
domain. Card 0 is the BMC's display (ast), which a GPU collector must skip.
"""

from __future__ import annotations

from pathlib import Path

from lens.sim.hosts import amdgpu, files
from lens.sim.hosts.state import GpuIdentity

BMC_BDF = "0000:02:00.0"


def _drm_entry(root: Path, device_dir: Path, node: str) -> None:
    entry = device_dir / "drm" / node
    files.write(entry / "dev", f"226:{node.removeprefix('card').removeprefix('renderD')}\n")
    files.link(entry / "device", device_dir)
    files.link(root / "sys/class/drm" / node, entry)


def write_bmc(root: Path) -> None:
    bmc = root / amdgpu.PCI_ROOT / BMC_BDF
    files.write(bmc / "vendor", "0x1a03\n")
    files.write(bmc / "device", "0x2000\n")
    files.write(bmc / "class", "0x030000\n")
    files.write(
        bmc / "uevent", f"DRIVER=ast\nPCI_CLASS=30000\nPCI_ID=1A03:2000\nPCI_SLOT_NAME={BMC_BDF}\n"
    )
    _drm_entry(root, bmc, "card0")
    files.device_node(root / "dev/dri/card0")
    files.link(root / "dev/dri/by-path" / f"pci-{BMC_BDF}-card", root / "dev/dri/card0")


def write_gpu(root: Path, gpu: GpuIdentity) -> None:
    device = amdgpu.pci_dir(root, gpu)
    nodes = [(device, f"pci-{gpu.bdf}", gpu.card, gpu.render_minor)]
    for part in gpu.partitions:
        platform = root / "sys/devices/platform" / f"amdgpu_xcp.{part.platform_id}"
        files.write(platform / "uevent", "DRIVER=amdgpu\nMODALIAS=platform:amdgpu_xcp\n")
        nodes.append(
            (platform, f"platform-amdgpu_xcp.{part.platform_id}", part.card, part.render_minor)
        )
    for device_dir, path_id, card, render in nodes:
        _drm_entry(root, device_dir, f"card{card}")
        _drm_entry(root, device_dir, f"renderD{render}")
        files.device_node(root / "dev/dri" / f"card{card}")
        files.device_node(root / "dev/dri" / f"renderD{render}")
        files.link(root / "dev/dri/by-path" / f"{path_id}-card", root / "dev/dri" / f"card{card}")
        files.link(
            root / "dev/dri/by-path" / f"{path_id}-render", root / "dev/dri" / f"renderD{render}"
        )


def write_kfd(root: Path, gpus: tuple[GpuIdentity, ...]) -> None:
    """KFD topology: two CPU nodes, then one node per GPU partition (render minor, location)."""
    files.device_node(root / "dev/kfd")
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    cpu = (
        "cpu_cores_count 96\nsimd_count 0\nmem_banks_count 1\ngfx_target_version 0\n"
        "drm_render_minor 0\n"
    )
    for index in range(2):
        files.write(nodes / str(index) / "properties", cpu + "location_id 0\ndomain 0\n")
        files.write(nodes / str(index) / "gpu_id", "0\n")
    node = 2
    for gpu in gpus:
        domain, bus = int(gpu.bdf[:4], 16), int(gpu.bdf[5:7], 16)
        minors = [gpu.render_minor] + [p.render_minor for p in gpu.partitions]
        for offset, minor in enumerate(minors):
            gpu_id = (gpu.kfd_gpu_id + offset * 7) % 65536
            properties = (
                f"cpu_cores_count 0\nsimd_count {gpu.model.compute_units * 4 // len(minors)}\n"
                f"mem_banks_count 1\ngfx_target_version {_gfx_target(gpu.model.gfx_version)}\n"
                f"vendor_id 4098\ndevice_id {int(gpu.model.device_id, 16)}\n"
                f"location_id {bus << 8}\ndomain {domain}\ndrm_render_minor {minor}\n"
                f"num_xcc {max(1, gpu.model.xcc_count // len(minors))}\n"
                f"unique_id {int(gpu.unique_id, 16)}\n"
            )
            files.write(nodes / str(node) / "properties", properties)
            files.write(nodes / str(node) / "gpu_id", f"{gpu_id}\n")
            node += 1


def _gfx_target(version: str) -> int:
    """gfx942 -> 90402 (major*10000 + minor*100 + stepping), as KFD prints it."""
    digits = version.removeprefix("gfx")
    if len(digits) != 3:
        return 0
    major, minor, stepping = int(digits[0]), int(digits[1], 16), int(digits[2], 16)
    return major * 10000 + minor * 100 + stepping
