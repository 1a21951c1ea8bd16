from __future__ import annotations

from lens.sim.hosts import dri
from lens.sim.hosts.tree import HostTree


def test_the_bmc_display_is_card0_and_not_amdgpu(mi300x: HostTree) -> None:
    uevent = (mi300x.root / "sys/class/drm/card0/device/uevent").read_text()
    assert "DRIVER=ast" in uevent
    assert (mi300x.root / "sys/class/drm/card1/dev").read_text() == "226:1\n"


def test_gfx_targets_as_kfd_prints_them() -> None:
    assert dri._gfx_target("gfx942") == 90402
    assert dri._gfx_target("gfx90a") == 90010
    assert dri._gfx_target("") == 0
