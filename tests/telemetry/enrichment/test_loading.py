"""The index follows the lab cluster (labcluster.py) as its rows change: a complete first load,
then only the rows changed since (counted), pods that end (kept a grace, then dropped), pods
rescheduled to another node, rows stamped late, the bound on pods, pods no controller wrote."""

from __future__ import annotations

import datetime

import peewee

from lens.containers.model import EventType
from lens.telemetry.enrichment.identity import Labels
from lens.telemetry.enrichment.loading import RefreshStats
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler
from tests.telemetry.enrichment import labcluster
from tests.telemetry.enrichment.clusterrows import workload_object
from tests.telemetry.enrichment.labcluster import (
    NVIDIA_PCI,
    NVIDIA_UUIDS,
    TRAINER_0,
    TRAINER_1,
    Lab,
)

GRACE = 300.0  # EnrichmentSettings' default ended_grace_seconds
OVERLAP = 120.0  # and overlap_seconds
RECHECK = 60.0  # and recheck_seconds
NO_RECHECK = 86_400.0  # for tests counting the rows a refresh reads

GPU_0 = (("Hostname", "node-a"), ("gpu", "0"))  # trainer-0's
GPU_3 = (("Hostname", "node-a"), ("gpu", "3"))  # nobody's
AMD_GPU_2 = (("gpu_id", "2"), ("hostname", "node-b"))  # trainer-1's


def added(lab: Lab, series: Labels) -> dict[str, str]:
    """The labels the relabeler adds to `series` ({}: none)."""
    found = WorkloadRelabeler(lab.shared, labcluster.settings()).relabel(series)
    return {} if found is None else dict(set(found) - set(series))


def reads(stats: RefreshStats) -> tuple[int, int, int, int]:
    return stats.pods_read, stats.containers_read, stats.gpus_read, stats.workloads_read


def quiet(lab: Lab) -> RefreshStats:
    """Refreshes past the overlap, so that the next one reads only what changes after this."""
    lab.clock.advance(OVERLAP + 1)
    lab.loader.refresh()
    lab.clock.advance(OVERLAP + 1)
    return lab.loader.refresh()


def test_a_refresh_reads_only_the_rows_changed_since_the_last(db: peewee.Database) -> None:
    lab = labcluster.build(db, recheck_seconds=NO_RECHECK)
    first = lab.loader.refresh()
    # 3 pods, their 3 containers with devices, 8 GPUs, and the 2 top-level workloads.
    assert first.first and reads(first) == (3, 3, 8, 2)
    generation = first.generation
    lab.clock.advance(OVERLAP / 2)
    again = lab.loader.refresh()  # within the overlap: the same rows again, nothing new
    # (all 3 workload rows: the ReplicaSet too)
    assert reads(again) == (3, 3, 8, 3) and again.generation == generation
    assert reads(quiet(lab)) == (0, 0, 0, 0)
    lab.cluster.finish(lab.pods["trainer-1"])
    changed = lab.loader.refresh()
    assert not changed.first and reads(changed) == (1, 0, 0, 0)
    assert changed.generation != generation


def test_rows_stamped_before_the_last_read_are_read_by_their_ids(db: peewee.Database) -> None:
    lab = labcluster.build(db, recheck_seconds=NO_RECHECK)
    lab.loader.refresh()
    quiet(lab)
    now = lab.clock.at
    lab.clock.advance(-3600)  # the controller and the agent write with clocks an hour behind
    late = lab.cluster.pod("uid-late", name="late", node="node-a")
    lab.cluster.container(late, node="node-a", container_id="c-late", gpus=[(3, NVIDIA_UUIDS[3])])
    lab.clock.at = now
    assert reads(lab.loader.refresh()) == (1, 1, 0, 0)
    assert added(lab, GPU_3) == {"pod": "late", "namespace": "ml", "pod_uid": "uid-late"}


def test_live_pods_are_read_again_so_an_end_written_late_is_not_missed(
    db: peewee.Database,
) -> None:
    lab = labcluster.build(db)
    lab.loader.refresh()
    finished_at = lab.clock.at
    quiet(lab)
    lab.clock.advance(600)
    lab.loader.refresh()
    now = lab.clock.at
    # The controller catches up ten minutes late, stamping the row with the pod's finish time.
    lab.clock.at = finished_at
    lab.cluster.finish(lab.pods["trainer-0"])
    lab.clock.at = now + datetime.timedelta(seconds=1)
    stats = lab.loader.refresh()
    assert reads(stats)[0] == 0, "the row is older than the overlap: not read as changed"
    assert added(lab, GPU_0) == TRAINER_0
    lab.clock.advance(RECHECK)
    assert reads(lab.loader.refresh())[:2] == (3, 3), "the 3 live pods and their containers"
    lab.clock.advance(GRACE)
    assert lab.loader.refresh().expired == 1
    assert added(lab, GPU_0) == {}
    assert added(lab, AMD_GPU_2) == TRAINER_1


def test_an_ended_pod_keeps_its_gpus_for_a_grace_then_goes(db: peewee.Database) -> None:
    lab = labcluster.build(db)
    lab.loader.refresh()
    lab.clock.advance(10)
    lab.cluster.delete(lab.pods["trainer-0"])  # its container's row still says Running
    assert lab.loader.refresh().expired == 0
    assert added(lab, GPU_0) == TRAINER_0  # late samples still get their labels
    lab.clock.advance(GRACE)
    assert lab.loader.refresh().expired == 1
    assert added(lab, GPU_0) == {}
    assert added(lab, (("namespace", "ml"), ("pod", "trainer-0"))) == {}
    assert added(lab, AMD_GPU_2) == TRAINER_1
    lab.clock.advance(OVERLAP / 2)
    lab.loader.refresh()  # its rows read again within the overlap do not bring it back
    assert added(lab, GPU_0) == {}
    assert lab.loader.expired_total == 1


def test_a_pod_rescheduled_to_another_node_moves_with_its_gpus(db: peewee.Database) -> None:
    lab = labcluster.build(db)
    lab.loader.refresh()
    lab.clock.advance(10)
    lab.cluster.delete(lab.pods["trainer-1"])
    lab.clock.advance(5)
    moved = lab.cluster.pod("uid-trainer-1b", name="trainer-1", node="node-a", owner=lab.job)
    lab.cluster.container(moved, node="node-a", container_id="c-t1b", gpus=[(3, NVIDIA_UUIDS[3])])
    lab.loader.refresh()
    now_on_a = {**TRAINER_1, "pod_uid": "uid-trainer-1b"}
    assert added(lab, GPU_3) == now_on_a
    by_name = added(lab, (("namespace", "ml"), ("pod", "trainer-1")))
    # The live one of the two pods of that name.
    assert by_name == {k: v for k, v in now_on_a.items() if k not in ("pod", "namespace")}
    assert added(lab, AMD_GPU_2) == TRAINER_1  # the old pod, for the grace only
    lab.clock.advance(GRACE)
    lab.loader.refresh()
    assert added(lab, AMD_GPU_2) == {}
    assert added(lab, GPU_3) == now_on_a


def test_past_max_pods_the_ended_then_the_oldest_pods_are_evicted(db: peewee.Database) -> None:
    lab = labcluster.build(db, max_pods=2)
    lab.clock.advance(60)
    newest = lab.cluster.pod("uid-new", name="new", node="node-b")
    lab.cluster.container(
        newest, node="node-b", container_id="c-new", gpus=[(3, "9a8b7c6d5e4f3003")]
    )
    first = lab.loader.refresh()
    # Four live pods: the three written first are equally old; ties go by uid.
    assert (first.pods, first.evicted) == (2, 2)
    assert added(lab, (("gpu", "3"), ("hostname", "node-b")))["pod"] == "new"
    assert added(lab, GPU_0) == {}  # trainer-0 and serve-x went
    assert added(lab, AMD_GPU_2) == TRAINER_1
    lab.clock.advance(OVERLAP / 2)
    assert lab.loader.refresh().pods == 2  # evicted pods' rows read again stay out
    lab.clock.advance(10)
    lab.cluster.finish(newest)
    lab.clock.advance(10)
    latest = lab.cluster.pod("uid-latest", name="latest", node="node-a")
    lab.cluster.container(latest, node="node-a", container_id="c-l", gpus=[(3, NVIDIA_UUIDS[3])])
    stats = lab.loader.refresh()
    assert (stats.pods, stats.evicted) == (2, 1)
    assert added(lab, (("gpu", "3"), ("hostname", "node-b"))) == {}  # the ended one went first
    assert added(lab, GPU_3)["pod"] == "latest"
    assert lab.loader.evicted_total == 3


def test_a_pod_no_controller_wrote_is_known_from_its_containers(db: peewee.Database) -> None:
    lab = labcluster.build(db)
    lab.loader.refresh()
    solo = {"metadata": {"uid": "uid-solo", "name": "solo", "namespace": "dev"}}
    lab.cluster.container(solo, node="node-a", container_id="c-solo", gpus=[(3, NVIDIA_UUIDS[3])])
    lab.loader.refresh()
    assert added(lab, GPU_3) == {"pod": "solo", "namespace": "dev", "pod_uid": "uid-solo"}
    lab.clock.advance(30)
    lab.cluster.container(
        solo,
        node="node-a",
        container_id="c-solo",
        gpus=[(3, NVIDIA_UUIDS[3])],
        event=EventType.EXITED,
    )
    lab.loader.refresh()
    assert added(lab, GPU_3)["pod"] == "solo"
    lab.clock.advance(GRACE)
    assert lab.loader.refresh().expired == 1
    assert added(lab, GPU_3) == {}


def test_a_gpu_that_left_its_node_is_no_longer_found_by_its_pci_address(
    db: peewee.Database,
) -> None:
    lab = labcluster.build(db)
    lab.loader.refresh()
    lab.clock.advance(10)
    lab.cluster.remove_gpu("node-a", NVIDIA_UUIDS[0])
    assert reads(lab.loader.refresh())[2] >= 1
    assert added(lab, (("node", "node-a"), ("pci_bus_id", NVIDIA_PCI[0]))) == {}
    # The container still names it by uuid and index.
    assert added(lab, (("UUID", NVIDIA_UUIDS[0]), ("node", "node-a"))) == TRAINER_0


def test_workloads_written_after_their_pods_are_taken_up(db: peewee.Database) -> None:
    lab = labcluster.build(db)
    deployment = workload_object("uid-late-dep", "Deployment", name="late", labels={"team": "ops"})
    replicas = workload_object("uid-late-rs", "ReplicaSet", name="late-5d", owner=deployment)
    pod = lab.cluster.pod("uid-late-0", name="late-0", node="node-a", owner=replicas)
    lab.cluster.container(pod, node="node-a", container_id="c-late", gpus=[(3, NVIDIA_UUIDS[3])])
    lab.loader.refresh()
    # Its owner is all there is to know yet.
    pod_labels = {"pod": "late-0", "namespace": "ml", "pod_uid": "uid-late-0"}
    assert added(lab, GPU_3) == {**pod_labels, "workload_uid": "uid-late-rs"}
    lab.clock.advance(10)
    lab.cluster.workloads([replicas, deployment])
    lab.loader.refresh()
    assert added(lab, GPU_3) == {
        **pod_labels,
        "workload_kind": "Deployment",
        "workload_name": "late",
        "workload_uid": "uid-late-dep",
        "team": "ops",
    }
