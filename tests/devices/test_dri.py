"""DRI nodes joined to GPUs by PCI address; compute partitions through the KFD topology."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import dri
from lens.devices.dri import DriCollector
from lens.devices.sysfs import HostFiles
from lens.runtime import errors
from lens.sim.hosts.tree import HostTree


def test_location_to_bdf() -> None:
    assert dri.location_to_bdf(0, 0x0C00) == "0000:0c:00.0"
    assert dri.location_to_bdf(1, (0xC1 << 8) | (3 << 3) | 1) == "0001:c1:03.1"


def test_parse_kfd_properties() -> None:
    gpu = "vendor_id 4098\nlocation_id 3072\ndomain 0\ndrm_render_minor 128\n"
    assert dri.parse_kfd_properties(gpu) == (128, "0000:0c:00.0")
    cpu = "cpu_cores_count 96\ndrm_render_minor 0\nlocation_id 0\ndomain 0\n"
    assert dri.parse_kfd_properties(cpu) is None
    assert dri.parse_kfd_properties(None) is None


def test_eight_gpus_and_the_bmc(mi300x: HostTree) -> None:
    mapping = DriCollector(HostFiles(mi300x.root)).collect()
    assert mapping.kfd == "/dev/kfd"
    bmc = [n for n in mapping.nodes if n.driver == "ast"]
    assert [(n.card, n.render) for n in bmc] == [("/dev/dri/card0", None)]
    for gpu in mi300x.node.gpus:
        (node,) = mapping.of_gpu(gpu.bdf)
        assert node.card == f"/dev/dri/card{gpu.card}"
        assert node.render == f"/dev/dri/renderD{gpu.render_minor}"
        assert (node.driver, node.partition, node.platform) == ("amdgpu", 0, None)


def test_partitions_join_their_gpu_through_kfd(cpx: HostTree) -> None:
    mapping = DriCollector(HostFiles(cpx.root)).collect()
    for gpu in cpx.node.gpus:
        nodes = mapping.of_gpu(gpu.bdf)
        assert [n.partition for n in nodes] == list(range(8))
        assert nodes[0].platform is None
        for node, part in zip(nodes[1:], gpu.partitions, strict=True):
            assert node.platform == f"amdgpu_xcp.{part.platform_id}"
            assert node.card == f"/dev/dri/card{part.card}"
            assert node.render == f"/dev/dri/renderD{part.render_minor}"


def test_partitions_without_kfd_stay_unattributed(cpx: HostTree) -> None:
    for node in (cpx.root / "sys/class/kfd/kfd/topology/nodes").iterdir():
        (node / "properties").unlink()
    mapping = DriCollector(HostFiles(cpx.root)).collect()
    orphans = [n for n in mapping.nodes if not n.pci_bus_id]
    assert len(orphans) == 14 and all(n.partition is None for n in orphans)
    assert all(len(mapping.of_gpu(g.bdf)) == 1 for g in cpx.node.gpus)


def test_any_pci_domain_and_absolute_links(tmp_path: Path) -> None:
    by_path = tmp_path / "dev/dri/by-path"
    by_path.mkdir(parents=True)
    os.symlink("/dev/dri/card3", by_path / "pci-0001:C1:00.0-card")
    os.symlink("../renderD131", by_path / "pci-0001:C1:00.0-render")
    os.symlink("../card9", by_path / "something-else")
    mapping = DriCollector(HostFiles(tmp_path)).collect()
    (node,) = mapping.nodes
    assert (node.pci_bus_id, node.card, node.render) == (
        "0001:c1:00.0",
        "/dev/dri/card3",
        "/dev/dri/renderD131",
    )
    assert node.driver == "" and mapping.kfd is None


def test_no_dri_nodes_is_no_data(tmp_path: Path) -> None:
    with pytest.raises(errors.NoDataError, match="no DRM nodes"):
        DriCollector(HostFiles(tmp_path)).collect()


@pytest.mark.parametrize(
    "text",
    [
        "vendor_id 4098\nlocation_id -5\ndomain 0\ndrm_render_minor 128\n",
        "vendor_id 4098\nlocation_id 3072\ndomain -1\ndrm_render_minor 128\n",
        "vendor_id 4098\nlocation_id 65536\ndomain 0\ndrm_render_minor 128\n",
        "vendor_id 4098\nlocation_id 3072\ndomain 0\ndrm_render_minor -128\n",
    ],
)
def test_kfd_properties_out_of_range_name_no_gpu(text: str) -> None:
    # A negative location made an address like "-001:-1:1f.3", joined to no GPU.
    assert dri.parse_kfd_properties(text) is None


_KFD_VALUES = st.one_of(st.integers().map(str), st.text(max_size=12), st.just("0x" + "f" * 20))


@given(
    st.dictionaries(
        st.sampled_from(["vendor_id", "location_id", "domain", "drm_render_minor", "x"]),
        _KFD_VALUES,
    )
)
def test_any_kfd_properties_are_a_gpu_address_or_none(properties: dict[str, str]) -> None:
    text = "\n".join(f"{key} {value}" for key, value in properties.items())
    parsed = dri.parse_kfd_properties(text)
    if parsed is not None:
        minor, bdf = parsed
        assert minor > 0 and re.fullmatch(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", bdf)
