"""Which labels of a series name its node, device or pod, as the exporters write them, and the
normal forms of GPU uuids, PCI addresses and indexes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.enrichment import identity
from lens.telemetry.enrichment.identity import KeyKind, SeriesIdentity


def parse(**labels: str) -> SeriesIdentity | None:
    return identity.parse_series(tuple(sorted(labels.items())))


def test_a_dcgm_exporter_series_names_its_gpu_strongest_key_first() -> None:
    # dcgm-exporter 4.x (rendermetrics): gpu, UUID, pci_bus_id, device, modelName, hostname.
    found = parse(
        __name__="DCGM_FI_DEV_GPU_UTIL",
        gpu="1",
        UUID="GPU-604AC76C-D9CF-FEF3-62E9-D92044AB6E52",
        pci_bus_id="00000000:3B:00.0",
        device="nvidia1",
        modelName="NVIDIA H100 80GB HBM3",
        hostname="gpu-node-7",
    )
    assert found == SeriesIdentity(
        nodes=("gpu-node-7",),
        devices=(
            (KeyKind.UUID, "604ac76c-d9cf-fef3-62e9-d92044ab6e52"),
            (KeyKind.PCI, "0000:3b:00.0"),
            (KeyKind.INDEX, "1"),  # gpu="1" and device="nvidia1" say the same
        ),
    )


def test_an_amd_exporter_series_names_gpu_and_pod() -> None:
    # device-metrics-exporter: the label enum names lowercased (exporterconfig.proto).
    found = parse(
        __name__="gpu_gfx_activity",
        gpu_id="3",
        serial_number="PCB046",
        hostname="mi300-1",
        pod="trainer-0",
        namespace="ml",
        pod_uuid="7f6c",
        container="main",
    )
    assert found == SeriesIdentity(
        nodes=("mi300-1",),
        devices=((KeyKind.SERIAL, "pcb046"), (KeyKind.INDEX, "3")),
        pod_uids=("7f6c",),
        pod_names=(("ml", "trainer-0"),),
    )


def test_the_exporters_own_pod_labels_renamed_by_the_scrape_come_first() -> None:
    found = parse(
        namespace="gpu-operator",
        pod="dcgm-exporter-x7",
        exported_namespace="ml",
        exported_pod="trainer-0",
        Hostname="node-a",
        primus_lens_node_name="node-a",
        node="node-a",
    )
    assert found is not None
    assert found.pod_names == (
        ("ml", "trainer-0"),
        ("ml", "dcgm-exporter-x7"),
        ("gpu-operator", "dcgm-exporter-x7"),
    )
    assert found.nodes == ("node-a",)  # each node once


def test_an_rdma_device_is_named_by_device() -> None:
    found = parse(__name__="lens_ib_port_receive_bytes_total", device="mlx5_0", node="n1")
    assert found == SeriesIdentity(nodes=("n1",), devices=((KeyKind.RDMA, "mlx5_0"),))


@pytest.mark.parametrize(
    "labels",
    [
        {"__name__": "up", "job": "node", "instance": "10.0.0.1:9100"},
        {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0"},  # no node: the index names no GPU
        {"__name__": "x", "node": "n1"},  # a node, no device
        {"__name__": "x", "pod": "p"},  # a pod name without its namespace
        {"__name__": "x", "node": "n1", "gpu": "zero", "pci_bus_id": "3b:00"},
    ],
)
def test_series_naming_no_pod_or_device_are_skipped(labels: dict[str, str]) -> None:
    assert parse(**labels) is None


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("00000000:3B:00.0", "0000:3b:00.0"),  # NVML
        ("0000:3b:00.0", "0000:3b:00.0"),  # sysfs
        ("3b:00.0", "0000:3b:00.0"),  # no domain
        (" 0001:AF:1F.7 ", "0001:af:1f.7"),
        ("3b:00", None),
        ("0000:3b:00.8", None),  # functions go to 7
        ("g000:3b:00.0", None),
        ("000000000:3b:00.0", None),  # a domain wider than 32 bits
        ("1:2:3:4", None),
        ("", None),
    ],
)
def test_pci_addresses_read_alike_whatever_the_domain_width_and_case(
    text: str, normal: str | None
) -> None:
    assert identity.normal_pci(text) == normal


def test_gpu_uuids_compare_without_case_or_nvidias_prefix() -> None:
    assert identity.normal_uuid("GPU-AB12") == identity.normal_uuid("gpu-ab12") == "ab12"
    assert identity.normal_uuid("9A8B7C6D5E4F3002") == "9a8b7c6d5e4f3002"
    assert identity.normal_uuid("  ") is None


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("0", "0"),
        ("07", "7"),
        (" 12 ", "12"),
        ("-1", None),
        ("1.0", None),
        ("\uff11", None),
        ("1234567", None),
    ],
)
def test_gpu_indexes_are_small_whole_numbers(text: str, normal: str | None) -> None:
    assert identity.normal_index(text) == normal


@given(st.dictionaries(st.text(max_size=12), st.text(max_size=300), max_size=10))
def test_any_labels_parse_to_an_identity_or_none(labels: dict[str, str]) -> None:
    found = identity.parse_series(tuple(sorted(labels.items())))
    if found is None:
        return
    assert found.pod_uids or found.pod_names or (found.nodes and found.devices)
    assert all(value in labels.values() for value in found.nodes + found.pod_uids)
