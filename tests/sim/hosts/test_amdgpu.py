from __future__ import annotations

from lens.sim.hosts import amdgpu
from lens.sim.hosts.tree import HostTree


def test_pp_dpm_levels_mark_the_current_one_with_lowercase_mhz(mi300x: HostTree) -> None:
    device = amdgpu.pci_dir(mi300x.root, mi300x.node.gpus[7])  # 80 % load: 1706 MHz
    lines = (device / "pp_dpm_sclk").read_text().splitlines()
    assert lines[0] == "S: 19Mhz"
    starred = [line for line in lines if line.endswith(" *")]
    assert starred == ["2: 1500Mhz *"]


def test_ras_counts_follow_amdgpu_ras(mi300x: HostTree) -> None:
    device = amdgpu.pci_dir(mi300x.root, mi300x.node.gpus[0])
    assert (device / "ras/umc_err_count").read_text() == "ue: 0\nce: 0\nde: 0\n"
    assert (device / "driver").resolve().name == "amdgpu"
    assert (
        mi300x.root / "sys/bus/pci/devices" / mi300x.node.gpus[0].bdf
    ).resolve() == device.resolve()
