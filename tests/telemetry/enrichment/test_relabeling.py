"""Series of the lab cluster (labcluster.py) get the labels of the pod and top-level workload they
concern, as dcgm-exporter, AMD's device-metrics-exporter, Lens's agent and the original name
GPUs and pods; the original's renaming as an option; the output's invariants for any labels."""

from __future__ import annotations

import datetime

import peewee
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.enrichment.identity import Labels
from lens.telemetry.enrichment.index import (
    GPU,
    RDMA,
    ContainerFacts,
    DeviceFacts,
    EnrichmentIndex,
    GpuFacts,
    PodFacts,
    Workload,
)
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex
from tests.telemetry.enrichment import labcluster
from tests.telemetry.enrichment.labcluster import (
    AMD_SERIALS,
    NVIDIA_UUIDS,
    SERVE_X,
    TRAINER_0,
    TRAINER_1,
)


def labels(**pairs: str) -> Labels:
    return tuple(sorted(pairs.items()))


def relabeler(db: peewee.Database, **changes: object) -> WorkloadRelabeler:
    lab = labcluster.build(db, **changes)
    lab.loader.refresh()
    return WorkloadRelabeler(lab.shared, labcluster.settings(**changes))


def with_added(series: Labels, added: dict[str, str]) -> Labels:
    return tuple(sorted({**dict(series), **added}.items()))


def test_gpu_series_are_found_by_index_uuid_pci_address_and_serial(db: peewee.Database) -> None:
    relabel = relabeler(db).relabel
    # dcgm-exporter: index and host name.
    by_index = labels(__name__="DCGM_FI_DEV_GPU_UTIL", gpu="1", Hostname="node-a")
    assert relabel(by_index) == with_added(by_index, TRAINER_0)
    # Its UUID in another case, with an index that Lens numbers otherwise: the uuid decides.
    by_uuid = labels(
        __name__="DCGM_FI_DEV_FB_USED", UUID=NVIDIA_UUIDS[2].upper(), gpu="0", hostname="node-a"
    )
    assert relabel(by_uuid) == with_added(by_uuid, SERVE_X)
    # NVML's eight-digit PCI domain in capitals against sysfs' four in lower case.
    by_pci = labels(
        __name__="DCGM_FI_DEV_POWER_USAGE", pci_bus_id="00000000:3B:00.0", node="node-a"
    )
    assert relabel(by_pci) == with_added(by_pci, TRAINER_0)
    # AMD: gpu_uuid is the GPU agent's own, which Lens does not know; the serial number is.
    amd = labels(
        __name__="gpu_gfx_activity",
        gpu_id="0",
        gpu_uuid="f3ae1c2d-0000-1000-8000-1",
        serial_number=AMD_SERIALS[2],
        hostname="node-b",
    )
    assert relabel(amd) == with_added(amd, TRAINER_1)
    # The original: its node label and gpu_id.
    original = labels(__name__="gpu_utilization", primus_lens_node_name="node-b", gpu_id="2")
    assert relabel(original) == with_added(original, TRAINER_1)


def test_rdma_series_are_found_by_device_name(db: peewee.Database) -> None:
    series = labels(__name__="lens_ib_port_receive_bytes_total", device="mlx5_0", node="node-a")
    assert relabeler(db).relabel(series) == with_added(series, TRAINER_0)


def test_pod_series_are_found_by_namespace_and_name_or_by_uid(db: peewee.Database) -> None:
    relabel = relabeler(db).relabel
    by_name = labels(__name__="container_cpu_usage_seconds_total", namespace="ml", pod="trainer-1")
    assert relabel(by_name) == with_added(by_name, TRAINER_1)
    by_uid = labels(__name__="kube_pod_info", uid="uid-serve-x")
    assert relabel(by_uid) == with_added(by_uid, SERVE_X)
    old_names = labels(__name__="DCGM_FI_DEV_SM_CLOCK", pod_namespace="web", pod_name="serve-x")
    assert relabel(old_names) == with_added(old_names, SERVE_X)
    # The same name in another namespace is another pod: none here.
    assert relabel(labels(__name__="x", namespace="web", pod="trainer-1")) is None


def test_a_scrape_renamed_pod_is_the_exporters_and_exported_pod_the_series(
    db: peewee.Database,
) -> None:
    series = labels(
        __name__="DCGM_FI_DEV_GPU_UTIL",
        namespace="gpu-operator",
        pod="dcgm-exporter-x7",
        exported_namespace="ml",
        exported_pod="trainer-0",
        gpu="3",
        Hostname="node-a",
    )
    found = relabeler(db).relabel(series)
    # pod and namespace stay the exporter's: a label the series has is never changed.
    added = {k: v for k, v in TRAINER_0.items() if k not in ("pod", "namespace")}
    assert found == with_added(series, added)


def test_a_lens_agent_series_naming_its_holder_gains_the_workload_and_no_second_pod(
    db: peewee.Database,
) -> None:
    # The agent's holder labels (docs/metrics.md) name the pod; the enrichment adds the rest.
    series = labels(
        __name__="lens_gpu_utilization_ratio",
        gpu="1",
        node="node-a",
        pod="trainer-0",
        namespace="ml",
        container="main",
        holders="1",
    )
    relabel = relabeler(db).relabel
    found = relabel(series)
    assert found == with_added(series, TRAINER_0)
    assert [name for name, _ in found].count("pod") == 1
    # A GPU shared by two pods names its longest holder: that pod's workload, not the other's.
    shared = labels(
        __name__="lens_gpu_utilization_ratio",
        gpu="1",
        node="node-a",
        pod="trainer-1",
        namespace="ml",
        container="main",
        holders="2",
    )
    assert relabel(shared) == with_added(shared, TRAINER_1)


def test_series_of_no_known_pod_or_device_stay_as_they_are(db: peewee.Database) -> None:
    relabel = relabeler(db).relabel
    assert relabel(labels(__name__="DCGM_FI_DEV_GPU_UTIL", gpu="3", Hostname="node-a")) is None
    assert relabel(labels(__name__="DCGM_FI_DEV_GPU_UTIL", gpu="0", Hostname="node-z")) is None
    assert relabel(labels(__name__="up", job="node", instance="10.0.0.1:9100")) is None
    assert relabel(labels(__name__="x", gpu="not-a-number", node="node-a")) is None


def test_labels_the_series_has_are_never_changed(db: peewee.Database) -> None:
    series = labels(
        __name__="DCGM_FI_DEV_GPU_UTIL", gpu="0", Hostname="node-a", workload_name="mine", team=""
    )
    found = relabeler(db).relabel(series)
    assert found is not None
    assert dict(found)["workload_name"] == "mine"
    assert set(series) <= set(found)


def test_the_team_comes_from_the_configured_workload_label(db: peewee.Database) -> None:
    relabel = relabeler(db, team_label="lens_team", team_label_key="org/team").relabel
    series = labels(__name__="DCGM_FI_DEV_GPU_UTIL", gpu="0", Hostname="node-a")
    found = relabel(series)
    assert found is not None
    assert dict(found)["lens_team"] == "cv"
    assert "team" not in dict(found)


def test_no_team_without_a_team_label_key(db: peewee.Database) -> None:
    found = relabeler(db, team_label_key="").relabel(labels(pod_uid="uid-trainer-0"))
    assert found == labels(**{k: v for k, v in TRAINER_0.items() if k != "team"})


def test_the_original_renaming_names_the_series_once_for_its_top_workload(
    db: peewee.Database,
) -> None:
    relabel = relabeler(db, rename_like_original=True).relabel
    series = labels(__name__="DCGM_FI_DEV_GPU_UTIL", gpu="2", Hostname="node-a", pod_name="x")
    assert relabel(series) == labels(
        __name__="workload_DCGM_FI_DEV_GPU_UTIL",
        gpu="2",
        Hostname="node-a",
        pod_name="serve-x",
        pod_uid="uid-serve-x",
        workload_name="serve",
        workload_uid="uid-serve",
    )


def test_the_original_renaming_leaves_pods_without_a_workload_alone(db: peewee.Database) -> None:
    lab = labcluster.build(db, rename_like_original=True)
    lab.cluster.pod("uid-bare", name="bare", node="node-a")
    lab.loader.refresh()
    relabel = WorkloadRelabeler(lab.shared, labcluster.settings(rename_like_original=True)).relabel
    assert relabel(labels(__name__="x", namespace="ml", pod="bare")) is None


def test_the_generation_changes_only_when_answers_may(db: peewee.Database) -> None:
    lab = labcluster.build(db)
    relabeler_ = WorkloadRelabeler(lab.shared, labcluster.settings())
    before = relabeler_.generation()
    lab.loader.refresh()
    loaded = relabeler_.generation()
    assert loaded != before
    lab.clock.advance(30)
    lab.loader.refresh()  # the overlap reads rows again: nothing new
    assert relabeler_.generation() == loaded
    lab.cluster.finish(lab.pods["trainer-1"])
    lab.clock.advance(30)
    lab.loader.refresh()
    assert relabeler_.generation() != loaded


# --- invariants for any labels ----------------------------------------------------------------

_AT = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)


def _memory_index() -> SharedIndex:
    """A small index built without a store: pod p1 of workload w1 holds GPU u0 (index 0) and
    mlx5_0 on node n1."""
    index = EnrichmentIndex()
    index.put_pod(
        PodFacts(uid="p1", name="p", namespace="ns", node="n1", ended=False, stamp=_AT), now=_AT
    )
    index.set_top("p1", "w1")
    index.put_workload(Workload(uid="w1", kind="Job", name="j", team="t"))
    index.put_gpu(
        GpuFacts(row_id=1, node="n1", uuid="u0", index="0", pci="0000:01:00.0", serial="")
    )
    devices = (
        DeviceFacts(kind=GPU, number=0, id="u0"),
        DeviceFacts(kind=RDMA, number=0, id="mlx5_0"),
    )
    index.put_container(
        ContainerFacts(
            container_id="c",
            pod_uid="p1",
            pod_name="p",
            pod_namespace="ns",
            node="n1",
            live=True,
            stamp=_AT,
            devices=devices,
        ),
        now=_AT,
    )
    shared = SharedIndex()
    shared.replace(index)
    return shared


# Labels naming p1 in each way the index knows it (node n1: GPU u0 at index 0, mlx5_0).
_NAMING_P1 = st.sampled_from(
    [
        {"pod_uid": "p1"},
        {"uid": "p1"},
        {"namespace": "ns", "pod": "p"},
        {"exported_namespace": "ns", "exported_pod": "p", "namespace": "x", "pod": "y"},
        {"node": "n1", "gpu": "0"},
        {"Hostname": "n1", "UUID": "GPU-U0"},
        {"hostname": "n1", "pci_bus_id": "00000000:01:00.0"},
        {"primus_lens_node_name": "n1", "device": "mlx5_0"},
    ]
)
_NAMES = st.sampled_from(
    [
        "gpu",
        "UUID",
        "node",
        "pod",
        "namespace",
        "pod_uid",
        "workload_name",
        "workload_uid",
        "workload_kind",
        "team",
        "pod_name",
        "instance",
        "a",
        "zz",
        "\u00e9t\u00e9",
    ]
)
_VALUES = st.sampled_from(["0", "n1", "p", "ns", "p1", "u0", "mlx5_0", "x"]) | st.text(max_size=5)
_ANY = st.dictionaries(_NAMES | st.text(max_size=6), _VALUES, max_size=8)


@st.composite
def _series_naming_p1(draw: st.DrawFn) -> Labels:
    """Labels naming p1, with other labels (of any name but the naming ones) and a metric name."""
    naming: dict[str, str] = draw(_NAMING_P1)
    others = {n: v for n, v in draw(_ANY).items() if n not in naming and n != "__name__"}
    metric = draw(st.sampled_from(["DCGM_FI_DEV_GPU_UTIL", "gpu_gfx_activity", "x"]))
    return tuple(sorted({**others, **naming, "__name__": metric}.items()))


def _check_output(series: Labels, found: Labels, *, rename: bool) -> None:
    names = [name for name, _ in found]
    assert names == sorted(names)  # bytewise: label names and values are compared as code points
    assert len(set(names)) == len(names)
    replaced = ORIGINAL_LABELS if rename else set()
    assert {(n, v) for n, v in series if n not in replaced} <= set(found)
    if rename:
        assert dict(found)["__name__"] == "workload_" + dict(series)["__name__"]
        assert dict(found)["workload_uid"] == "w1"


ORIGINAL_LABELS = {"__name__", "pod_name", "pod_uid", "workload_name", "workload_uid"}


@given(series=_series_naming_p1(), rename=st.booleans())
def test_a_series_naming_a_known_pod_keeps_its_labels_sorted_unique_and_unchanged(
    series: Labels, rename: bool
) -> None:
    relabel = WorkloadRelabeler(_memory_index(), EnrichmentSettings(rename_like_original=rename))
    found = relabel.relabel(series)
    assert found is not None and found != series
    _check_output(series, found, rename=rename)
    # Whatever labels it had, it has the pod's uid now (its own, if it named one).
    assert dict(found)["pod_uid"] == ("p1" if rename else dict(series).get("pod_uid", "p1"))


@given(series=_ANY.map(lambda d: tuple(sorted(d.items()))), rename=st.booleans())
def test_any_series_comes_out_sorted_unique_and_unchanged_or_not_at_all(
    series: Labels, rename: bool
) -> None:
    relabel = WorkloadRelabeler(_memory_index(), EnrichmentSettings(rename_like_original=rename))
    found = relabel.relabel(series)
    if found is not None:
        _check_output(series, found, rename=rename)
    else:
        assert relabel.relabel(series) is None  # the same answer every time
