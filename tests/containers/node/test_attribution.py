from __future__ import annotations

from lens.containers.node.attribution import attribute, with_allocated_gpus
from lens.containers.node.spec import SpecDevice
from lens.devices.devnodes import NodeDevice

GPU0 = NodeDevice(type="gpu", name="MI300X", number=0, uuid="gpu-0")
GPU1 = NodeDevice(type="gpu", name="MI300X", number=1, uuid="gpu-1")
NIC = NodeDevice(type="ib", name="mlx5_0", number=0, uuid="guid-0")
TABLE = {(226, 1): GPU0, (226, 128): GPU0, (226, 129): GPU1, (231, 192): NIC}


def _node(path: str, major: int, minor: int, kind: str = "c") -> SpecDevice:
    return SpecDevice(path=path, type=kind, major=major, minor=minor)


def test_card_and_render_of_one_gpu_count_once_and_kfd_adds_nothing() -> None:
    nodes = [
        _node("/dev/kfd", 235, 0),
        _node("/dev/dri/card1", 226, 1),
        _node("/dev/dri/renderD128", 226, 128),
        _node("/dev/dri/renderD129", 226, 129),
        _node("/dev/infiniband/uverbs0", 231, 192),
        _node("/dev/infiniband/rdma_cm", 10, 58),
    ]
    devices = attribute(nodes, lambda major, minor: TABLE.get((major, minor)))
    assert [(d.type, d.number, d.uuid, d.path) for d in devices] == [
        ("gpu", 0, "gpu-0", "/dev/dri/card1"),
        ("gpu", 1, "gpu-1", "/dev/dri/renderD129"),
        ("ib", 0, "guid-0", "/dev/infiniband/uverbs0"),
    ]


def test_devices_are_matched_by_number_not_by_path() -> None:
    renamed = [_node("/whatever/gpu", 226, 129), _node("/dev/dri/renderD128", 226, 200)]
    devices = attribute(renamed, lambda major, minor: TABLE.get((major, minor)))
    assert [d.uuid for d in devices] == ["gpu-1"]


def test_block_devices_are_never_gpus() -> None:
    assert attribute([_node("/dev/x", 226, 128, "b")], lambda a, b: TABLE.get((a, b))) == ()


def test_the_kubelets_allocation_replaces_the_gpus_a_privileged_spec_lists() -> None:
    privileged = attribute(
        [
            _node("/dev/dri/renderD128", 226, 128),
            _node("/dev/dri/renderD129", 226, 129),
            _node("/dev/infiniband/uverbs0", 231, 192),
        ],
        lambda major, minor: TABLE.get((major, minor)),
    )
    devices = with_allocated_gpus(privileged, [GPU1])
    assert [(d.type, d.number, d.path) for d in devices] == [
        ("gpu", 1, "/dev/dri/renderD129"),
        ("ib", 0, "/dev/infiniband/uverbs0"),
    ]
    # A GPU the spec does not list (NVIDIA's runtime adds its nodes later) comes without a path.
    assert [(d.number, d.path) for d in with_allocated_gpus((), [GPU0, NIC])] == [(0, "")]
