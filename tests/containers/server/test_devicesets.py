"""Device sets known stored: written once per container, again when they change."""

from __future__ import annotations

from lens.containers.model import Container, ContainerEvent, Device, EventType, Pod, Source
from lens.containers.server.devicesets import StoredDevices

GPU = Device(type="gpu", name="MI300X", number=0, uuid="g0")


def _event(kind: EventType, cid: str, time: float, status: str) -> ContainerEvent:
    container = Container(
        id=cid,
        name="main",
        pod=Pod(uid="u", name="p", namespace="ns"),
        devices=(GPU,),
        created_at=1.0,
        status=status,
    )
    return ContainerEvent(type=kind, source=Source.CONTAINERD, container=container, time=time)


def test_devices_are_written_once_per_container_and_again_when_they_change() -> None:
    stored = StoredDevices(capacity=2)
    created, started = (
        _event(EventType.CREATED, "a", 1.0, "Created"),
        _event(EventType.STARTED, "a", 2.0, "Running"),
    )
    assert stored.changes([created, started]).to_store == (started,)
    stored.remember([started])
    assert stored.changes([started]).to_store == ()
    regrouped = ContainerEvent(
        type=EventType.OBSERVED,
        source=Source.CONTAINERD,
        container=Container(
            id="a",
            name="main",
            pod=None,
            devices=(Device(type="ib", name="mlx5_0", number=0, uuid="n0"),),
            created_at=1.0,
            status="Running",
        ),
        time=3.0,
    )
    changed = stored.changes([regrouped])
    assert (changed.to_store, changed.replaced) == ((regrouped,), (regrouped,))
    stored.remember([_event(EventType.CREATED, cid, 1.0, "Created") for cid in ("b", "c")])
    forgotten = stored.changes([started])
    assert (forgotten.to_store, forgotten.replaced) == ((started,), ()), "past capacity"
