from __future__ import annotations

from lens.containers.model import STATUS_AFTER, Container, Device, EventType, Source


def test_statuses_keep_the_original_strings_and_observed_changes_none() -> None:
    assert set(STATUS_AFTER.values()) == {"Created", "Running", "Exit", "OOMKilled", "Deleted"}
    assert EventType.OBSERVED not in STATUS_AFTER
    assert {s.value for s in Source} == {"k8s", "docker"}


def test_a_container_lists_its_gpus() -> None:
    gpu = Device(type="gpu", name="MI300X", number=3, uuid="g3")
    nic = Device(type="ib", name="mlx5_0", number=0, uuid="n0")
    container = Container(
        id="c", name="main", pod=None, devices=(gpu, nic), created_at=1.0, status="Running"
    )
    assert container.gpus == (gpu,)
