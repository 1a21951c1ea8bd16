"""Host trees read back the way a node agent would, following the kernel's documented units."""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts import profiles
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree


def _read(path: Path) -> str:
    return path.read_text().strip()


def _amdgpu_cards(root: Path) -> dict[str, Path]:
    """PCI address -> device directory of every amdgpu card (the BMC's card0 is skipped)."""
    cards = {}
    for card in sorted((root / "sys/class/drm").glob("card*")):
        device = card / "device"
        uevent = dict(line.split("=", 1) for line in _read(device / "uevent").splitlines())
        if uevent.get("DRIVER") == "amdgpu" and "PCI_SLOT_NAME" in uevent:
            cards[uevent["PCI_SLOT_NAME"]] = device
    return cards


def _hwmon(device: Path) -> Path:
    (hwmon,) = list((device / "hwmon").glob("hwmon*"))
    assert _read(hwmon / "name") == "amdgpu"
    return hwmon


def test_readings_follow_the_kernel_units(mi300x: HostTree) -> None:
    cards = _amdgpu_cards(mi300x.root)
    assert len(cards) == 8
    for gpu, reading in zip(mi300x.node.gpus, mi300x.node.gpu_readings, strict=True):
        device = cards[gpu.bdf]
        hwmon = _hwmon(device)
        assert (
            int(_read(device / "gpu_busy_percent")) == reading.utilization == 10 * (gpu.index + 1)
        )
        assert int(_read(hwmon / "power1_input")) / 1e6 == pytest.approx(
            reading.power_w
        )  # microwatts
        assert int(_read(hwmon / "temp2_input")) / 1000 == pytest.approx(
            reading.temp_junction_c, abs=0.001
        )
        assert _read(hwmon / "temp2_label") == "junction"
        assert int(_read(hwmon / "freq1_input")) / 1e6 == reading.sclk_mhz  # hertz
        assert int(_read(device / "mem_info_vram_used")) == reading.vram_used_bytes
        assert int(_read(device / "mem_info_vram_total")) == 192 * 1024**3
        assert not (hwmon / "temp1_input").exists(), "MI300 has no edge sensor"
        assert not (hwmon / "power1_average").exists()
        assert len(_read(device / "unique_id")) == 16
        assert _read(device / "current_compute_partition") == "SPX"


def test_gpu_metrics_is_a_v1_8_table_in_the_right_units(mi300x: HostTree) -> None:
    device = _amdgpu_cards(mi300x.root)[mi300x.node.gpus[3].bdf]
    blob = (device / "gpu_metrics").read_bytes()
    size, major, minor = struct.unpack_from("<HBB", blob, 0)
    assert (size, major, minor, len(blob)) == (3872, 1, 8, 3872)
    reading = mi300x.node.gpu_readings[3]
    hotspot, mem, _vrsoc, power, gfx = struct.unpack_from("<HHHHH", blob, 4)
    assert (hotspot, mem, power, gfx) == (
        int(reading.temp_junction_c),
        int(reading.temp_mem_c),
        int(reading.power_w),
        40,
    )
    assert struct.unpack_from("<H", blob, 338)[0] == 1  # num_partition
    assert struct.unpack_from("<H", blob, 8)[0] == 0xFFFF, "temperature_vrsoc is not available"


def test_readings_move_with_time_and_counters_only_grow(memory_dir: Path, clock: FakeClock) -> None:
    wave: list[profiles.Profile] = [profiles.Wave(low=0, high=100, period_seconds=40)] * 2
    tree = HostTree(memory_dir, NodeSpec(gpus=2, rdma=2), clock=clock, device_profiles=wave).build()
    device = _amdgpu_cards(tree.root)[tree.node.gpus[0].bdf]
    port = tree.root / "sys/class/infiniband/mlx5_0/ports/1/counters"
    seen, energy, sent = set(), [], []
    for _ in range(8):
        clock.advance(5)
        tree.update()
        seen.add(int(_read(device / "gpu_busy_percent")))
        blob = (device / "gpu_metrics").read_bytes()
        energy.append(struct.unpack_from("<Q", blob, 24)[0])
        sent.append(int(_read(port / "port_xmit_data")))
    assert len(seen) > 4, "utilisation follows the profile"
    assert energy == sorted(energy) and energy[-1] > energy[0]
    assert sent == sorted(sent) and sent[-1] > 0
    joules = tree.node.gpu_readings[0].energy_j
    assert energy[-1] / 65536 == pytest.approx(joules, rel=1e-6)  # 15.259 µJ units


def test_update_gpus_rewrites_only_the_gpu_files_that_changed(
    memory_dir: Path, clock: FakeClock
) -> None:
    steps: list[profiles.Profile] = [profiles.Phases(((30, 60), (70, 60)))] * 2
    tree = HostTree(memory_dir, NodeSpec(gpus=2, rdma=1), clock=clock, device_profiles=steps)
    tree.build()
    device = _amdgpu_cards(tree.root)[tree.node.gpus[0].bdf]
    port = tree.root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data"
    sent = _read(port)
    tree.update_gpus()
    busy, metrics = device / "gpu_busy_percent", device / "gpu_metrics"
    written, table = busy.stat().st_mtime_ns, metrics.read_bytes()
    clock.advance(10)
    tree.update_gpus()  # the same load: only gpu_metrics (its counters and clocks) changes
    assert busy.stat().st_mtime_ns == written and metrics.read_bytes() != table
    clock.advance(60)
    tree.update_gpus()
    assert _read(busy) == "70" and tree.node.gpu_readings[1].utilization == 70
    assert _read(port) == sent, "the NICs' files stay as they were"
    tree.corrupt(str(busy.relative_to(tree.root)), "garbage")
    clock.advance(5)
    tree.update_gpus()
    assert _read(busy) == "70", "a file changed behind its back is written again"


def test_dri_by_path_links_and_kfd_topology_agree(mi300x: HostTree) -> None:
    root = mi300x.root
    for gpu in mi300x.node.gpus:
        card = root / "dev/dri/by-path" / f"pci-{gpu.bdf}-card"
        render = root / "dev/dri/by-path" / f"pci-{gpu.bdf}-render"
        assert os.readlink(card) == f"../card{gpu.card}"
        assert render.resolve() == (root / "dev/dri" / f"renderD{gpu.render_minor}").resolve()
    assert os.readlink(root / "dev/dri/by-path/pci-0000:02:00.0-card") == "../card0"
    minors = {}
    for node in (root / "sys/class/kfd/kfd/topology/nodes").iterdir():
        properties = dict(line.split(" ", 1) for line in _read(node / "properties").splitlines())
        if properties["drm_render_minor"] != "0":
            location = int(properties["location_id"])
            bus, slot = (location >> 8) & 0xFF, (location >> 3) & 0x1F
            bdf = f"{int(properties['domain']):04x}:{bus:02x}:{slot:02x}.0"
            minors[int(properties["drm_render_minor"])] = bdf
    assert minors == {g.render_minor: g.bdf for g in mi300x.node.gpus}
    assert (root / "dev/kfd").exists()


def test_a_partitioned_mi300x_shows_platform_partitions(memory_dir: Path, clock: FakeClock) -> None:
    tree = HostTree(
        memory_dir, NodeSpec(gpus=8, compute_partition="CPX", rdma=0), clock=clock
    ).build()
    renders = sorted(p.name for p in (tree.root / "sys/class/drm").glob("renderD*"))
    assert len(renders) == 64
    platform_links = sorted(
        p.name for p in (tree.root / "dev/dri/by-path").glob("platform-amdgpu_xcp.*-render")
    )
    assert len(platform_links) == 56
    partition = tree.node.gpus[0].partitions[0]
    device = tree.root / "sys/class/drm" / f"card{partition.card}" / "device"
    assert device.resolve().name == f"amdgpu_xcp.{partition.platform_id}"
    parent = _amdgpu_cards(tree.root)[tree.node.gpus[0].bdf]
    assert _read(parent / "current_compute_partition") == "CPX"
    assert struct.unpack_from("<H", (parent / "gpu_metrics").read_bytes(), 338)[0] == 8


def test_an_mi250x_reports_average_power_edge_temperature_and_v1_3_metrics(
    memory_dir: Path, clock: FakeClock
) -> None:
    tree = HostTree(memory_dir, NodeSpec(model="MI250X", gpus=2, rdma=0), clock=clock).build()
    device = _amdgpu_cards(tree.root)[tree.node.gpus[0].bdf]
    hwmon = _hwmon(device)
    assert (hwmon / "power1_average").exists() and not (hwmon / "power1_input").exists()
    assert _read(hwmon / "temp1_label") == "edge"
    assert struct.unpack_from("<HBB", (device / "gpu_metrics").read_bytes(), 0) == (120, 1, 3)
    assert not (device / "current_compute_partition").exists()


def test_rdma_counters_are_in_four_byte_words_and_uverbs_map_to_devices(
    mi300x: HostTree, clock: FakeClock
) -> None:
    clock.advance(10)
    mi300x.update()
    root = mi300x.root
    for nic, port in zip(mi300x.node.nics, mi300x.node.port_readings, strict=True):
        base = root / "sys/class/infiniband" / nic.name
        assert _read(base / "node_guid") == nic.node_guid
        assert len(nic.node_guid.split(":")) == 4
        assert _read(base / "ports/1/state") == "4: ACTIVE"
        assert _read(base / "ports/1/phys_state") == "5: LinkUp"
        assert _read(base / "ports/1/rate") == "400 Gb/sec (4X NDR)"
        assert _read(base / "ports/1/link_layer") == "Ethernet"
        assert (
            int(_read(base / "ports/1/counters/port_xmit_data")) * 4
            == port.xmit_bytes - port.xmit_bytes % 4
        )
        assert (
            int(_read(base / "ports/1/hw_counters/rx_write_requests"))
            == port.hw_counters["rx_write_requests"]
        )
        verbs = root / "sys/class/infiniband_verbs" / f"uverbs{nic.uverbs}"
        assert _read(verbs / "ibdev") == nic.name
        assert _read(verbs / "dev") == f"231:{192 + nic.uverbs}"
        assert (root / "dev/infiniband" / f"uverbs{nic.uverbs}").exists()
        assert _read(base / "device/numa_node") == str(nic.numa_node)


def test_an_nvidia_node_has_device_nodes_and_an_nvml_stand_in(
    memory_dir: Path, clock: FakeClock
) -> None:
    tree = HostTree(memory_dir, NodeSpec(model="H100", gpus=2, rdma=1), clock=clock).build()
    assert (tree.root / "dev/nvidia0").exists() and (tree.root / "dev/nvidiactl").exists()
    assert not (tree.root / "sys/class/drm").exists()
    nvml = tree.nvml()
    nvml.nvmlInit()
    assert nvml.nvmlDeviceGetCount() == 2
    with pytest.raises(ValueError, match="not NVIDIA"):
        HostTree(memory_dir / "amd", NodeSpec(gpus=1, rdma=0), clock=clock).build().nvml()


def test_faults_break_files_and_tools(mi300x: HostTree) -> None:
    busy = mi300x.node.gpus[0].bdf
    mi300x.remove(f"sys/devices/pci0000:00/{busy}/gpu_busy_percent")
    assert not (_amdgpu_cards(mi300x.root)[busy] / "gpu_busy_percent").exists()
    mi300x.corrupt(f"sys/devices/pci0000:00/{busy}/mem_busy_percent", "garbage\n")
    assert _read(_amdgpu_cards(mi300x.root)[busy] / "mem_busy_percent") == "garbage"
    mi300x.break_tool("amd-smi", "fail")
    assert mi300x.state()["faults"] == {"amd-smi": "fail"}
    mi300x.break_tool("amd-smi", None)
    assert mi300x.state()["faults"] == {}


def test_bad_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown GPU model"):
        NodeSpec(model="Z9000")
    with pytest.raises(ValueError, match="at most"):
        NodeSpec(gpus=17)
    with pytest.raises(ValueError, match="does not support compute partition CPX"):
        NodeSpec(model="MI250X", compute_partition="CPX")


def test_a_port_goes_down_and_up_and_an_unplugged_gpu_leaves_the_bus(
    mi300x: HostTree, clock: FakeClock
) -> None:
    state = mi300x.root / "sys/class/infiniband/mlx5_2/ports/1/state"
    mi300x.set_port_down(2)
    assert state.read_text().strip() == "1: DOWN"
    clock.advance(5)
    mi300x.update()
    assert state.read_text().strip() == "1: DOWN", "stays down as readings move"
    mi300x.set_port_down(2, down=False)
    assert state.read_text().strip() == "4: ACTIVE"
    gpu = mi300x.node.gpus[7]
    mi300x.unplug_gpu(7)
    assert not (mi300x.root / "sys/bus/pci/devices" / gpu.bdf).exists()
    assert not (mi300x.root / f"sys/class/drm/card{gpu.card}").exists()
    assert (mi300x.root / f"sys/class/drm/card{mi300x.node.gpus[6].card}").exists()


def test_a_new_serial_shows_in_sysfs_and_in_what_the_tools_print(mi300x: HostTree) -> None:
    card = mi300x.node.gpus[3].card
    mi300x.set_serial(3, "NEWSERIAL")
    serial = mi300x.root / f"sys/class/drm/card{card}/device/serial_number"
    assert serial.read_text().strip() == "NEWSERIAL"
    assert [g["serial"] for g in mi300x.state()["gpus"]].count("NEWSERIAL") == 1
    printed = subprocess.run(
        [str(mi300x.tool("amd-smi")), "static", "--json"], capture_output=True, check=True
    )
    assert printed.stdout.count(b"NEWSERIAL") == 1
