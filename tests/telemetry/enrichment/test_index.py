"""The index's maps on their own: who holds a device when several pods name it, names of pods
that came and went, GPU keys from the inventory and from containers, bounds, and what counts as
a change."""

from __future__ import annotations

import datetime

from lens.telemetry.enrichment.identity import KeyKind, SeriesIdentity
from lens.telemetry.enrichment.index import (
    GPU,
    Attribution,
    ContainerFacts,
    DeviceFacts,
    EnrichmentIndex,
    GpuFacts,
    PodFacts,
    Workload,
)

T0 = datetime.datetime(2026, 5, 1, 12, tzinfo=datetime.UTC)
MINUTE = datetime.timedelta(minutes=1)


def pod(uid: str, *, name: str = "", ended: bool = False, at: int = 0) -> PodFacts:
    return PodFacts(
        uid=uid, name=name or uid, namespace="ml", node="n1", ended=ended, stamp=T0 + at * MINUTE
    )


def container(cid: str, pod_uid: str, *gpus: tuple[int, str], live: bool = True) -> ContainerFacts:
    return ContainerFacts(
        container_id=cid,
        pod_uid=pod_uid,
        pod_name=pod_uid,
        pod_namespace="ml",
        node="n1",
        live=live,
        stamp=T0,
        devices=tuple(DeviceFacts(kind=GPU, number=i, id=u) for i, u in gpus),
    )


def holder(index: EnrichmentIndex, *devices: tuple[KeyKind, str]) -> str | None:
    found = index.attribute(SeriesIdentity(nodes=("n1",), devices=devices))
    return None if found is None else found.pod_uid


def test_a_live_pod_holds_a_device_before_an_ended_one_and_a_newer_before_an_older() -> None:
    index = EnrichmentIndex()
    index.put_pod(pod("old", at=0), now=T0)
    index.put_pod(pod("new", at=5), now=T0)
    index.put_container(container("c-old", "old", (0, "u0")), now=T0)
    index.put_container(container("c-new", "new", (0, "u0")), now=T0)
    assert holder(index, (KeyKind.UUID, "u0")) == "new"
    index.put_pod(pod("new", at=6, ended=True), now=T0 + 6 * MINUTE)
    assert holder(index, (KeyKind.UUID, "u0")) == "old"


def test_a_name_names_the_live_pod_of_that_name() -> None:
    index = EnrichmentIndex()
    index.put_pod(pod("u1", name="trainer-0", ended=True, at=9), now=T0)
    index.put_pod(pod("u2", name="trainer-0", at=1), now=T0)
    found = index.attribute(SeriesIdentity(pod_names=(("ml", "trainer-0"),)))
    assert found == Attribution(
        pod_uid="u2", pod_name="trainer-0", namespace="ml", top_uid="", workload=None
    )
    index.drop_pod("u2")
    found = index.attribute(SeriesIdentity(pod_names=(("ml", "trainer-0"),)))
    assert found is not None and found.pod_uid == "u1"
    index.drop_pod("u1")
    assert index.attribute(SeriesIdentity(pod_names=(("ml", "trainer-0"),))) is None


def test_gpus_are_found_by_the_inventorys_keys_or_the_containers_index() -> None:
    index = EnrichmentIndex()
    index.put_pod(pod("p"), now=T0)
    index.put_container(container("c", "p", (0, "u0"), (1, "u1")), now=T0)
    index.put_gpu(
        GpuFacts(row_id=7, node="n1", uuid="u1", index="1", pci="0000:3b:00.0", serial="s1")
    )
    assert holder(index, (KeyKind.PCI, "0000:3b:00.0")) == "p"
    assert holder(index, (KeyKind.SERIAL, "s1")) == "p"
    assert holder(index, (KeyKind.INDEX, "0")) == "p"  # no inventory row: the container's
    # A key that names no GPU here is passed over for the next.
    assert holder(index, (KeyKind.UUID, "elsewhere"), (KeyKind.INDEX, "1")) == "p"
    index.drop_gpu(7)
    assert holder(index, (KeyKind.PCI, "0000:3b:00.0")) is None
    assert holder(index, (KeyKind.UUID, "u1")) == "p"


def test_a_gpu_known_and_held_by_nobody_stops_the_search() -> None:
    index = EnrichmentIndex()
    index.put_pod(pod("p"), now=T0)
    index.put_container(container("c", "p", (0, "u0")), now=T0)
    index.put_gpu(GpuFacts(row_id=1, node="n1", uuid="u3", index="3", pci="", serial=""))
    # u3 is known and free: its series is nobody's, though its index 0 by another count is held.
    assert holder(index, (KeyKind.UUID, "u3"), (KeyKind.INDEX, "0")) is None


def test_a_container_of_an_unknown_pod_counts_only_while_live() -> None:
    index = EnrichmentIndex()
    assert not index.put_container(container("c", "gone", (0, "u0"), live=False), now=T0)
    assert len(index) == 0 and holder(index, (KeyKind.UUID, "u0")) is None
    assert index.put_container(container("c", "solo", (0, "u0")), now=T0)
    assert holder(index, (KeyKind.UUID, "u0")) == "solo"
    index.put_container(container("c", "solo", (0, "u0"), live=False), now=T0 + MINUTE)
    assert index.expire(now=T0 + 2 * MINUTE, grace=MINUTE) == ["solo"]
    assert holder(index, (KeyKind.UUID, "u0")) is None


def test_pods_past_the_limit_go_ended_first_then_least_recently_changed() -> None:
    index = EnrichmentIndex()
    for uid, at in (("a", 3), ("b", 1), ("c", 2)):
        index.put_pod(pod(uid, at=at), now=T0)
    index.put_pod(pod("d", at=9, ended=True), now=T0 + 9 * MINUTE)
    assert index.evict_to(4) == []
    assert index.evict_to(2) == ["d", "b"]
    assert [index.has_pod(uid) for uid in "abcd"] == [True, False, True, False]


def test_a_workload_is_kept_while_a_pod_is_under_it() -> None:
    index = EnrichmentIndex()
    index.put_workload(Workload(uid="w", kind="Job", name="j", team=""))  # nobody's: not kept
    index.put_pod(pod("p"), now=T0)
    index.set_top("p", "w")
    assert index.attribute(SeriesIdentity(pod_uids=("p",))) == Attribution(
        pod_uid="p", pod_name="p", namespace="ml", top_uid="w", workload=None
    )
    job = Workload(uid="w", kind="Job", name="j", team="t")
    index.put_workload(job)
    found = index.attribute(SeriesIdentity(pod_uids=("p",)))
    assert found is not None and found.workload == job
    assert index.pods_under("w") == {"p"}
    index.drop_pod("p")
    index.put_pod(pod("p"), now=T0)
    index.set_top("p", "w")
    found = index.attribute(SeriesIdentity(pod_uids=("p",)))
    assert found is not None and found.workload is None  # forgotten with its last pod


def test_facts_told_again_are_no_change() -> None:
    index = EnrichmentIndex()
    index.put_pod(pod("p"), now=T0)
    index.put_container(container("c", "p", (0, "u0")), now=T0)
    index.put_gpu(GpuFacts(row_id=1, node="n1", uuid="u0", index="0", pci="", serial=""))
    assert index.take_changed()
    index.put_pod(pod("p"), now=T0 + MINUTE)
    index.put_container(container("c", "p", (0, "u0")), now=T0 + MINUTE)
    index.put_gpu(GpuFacts(row_id=1, node="n1", uuid="u0", index="0", pci="", serial=""))
    index.set_top("p", "")
    assert not index.take_changed()
    index.put_pod(pod("p", at=1), now=T0 + MINUTE)
    assert index.take_changed()
