from __future__ import annotations

import random

import pytest

from lens.sim.kube import objects
from lens.sim.kube.resources import BUILTIN
from lens.sim.kube.status import ApiError

POD_TYPE = next(t for t in BUILTIN if t.kind == "Pod")
DEPLOYMENT_TYPE = next(t for t in BUILTIN if t.kind == "Deployment")


def _container(
    requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, object]:
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}}


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        ([_container()], "BestEffort"),
        ([_container(limits={"cpu": "1", "memory": "1Gi"})], "Guaranteed"),
        (
            [
                _container(
                    requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}
                )
            ],
            "Guaranteed",
        ),
        ([_container(requests={"cpu": "1"})], "Burstable"),
        (
            [_container(limits={"cpu": "1", "memory": "1Gi"}), _container(requests={"cpu": "1"})],
            "Burstable",
        ),
        ([_container(limits={"amd.com/gpu": "8"})], "BestEffort"),
    ],
)
def test_pod_qos(containers: list[dict[str, object]], qos: str) -> None:
    assert objects.pod_qos({"containers": containers}) == qos


def test_prepare_create_stamps_and_defaults() -> None:
    body = objects.check_envelope(
        POD_TYPE,
        {"metadata": {"name": "p"}, "spec": {"containers": []}, "status": {"phase": "Running"}},
    )
    created = objects.prepare_create(
        POD_TYPE, body, namespace="ns", now=1_800_000_000, rng=random.Random(1), keep_status=False
    )
    assert created["metadata"]["namespace"] == "ns"
    assert created["metadata"]["creationTimestamp"] == "2027-01-15T08:00:00Z"
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert created["spec"]["restartPolicy"] == "Always"
    kept = objects.prepare_create(
        POD_TYPE, body, namespace="ns", now=0, rng=random.Random(1), keep_status=True
    )
    assert kept["status"]["phase"] == "Running"
    deployment = objects.check_envelope(
        DEPLOYMENT_TYPE, {"metadata": {"name": "d"}, "spec": {}, "status": {"replicas": 3}}
    )
    assert "status" not in objects.prepare_create(
        DEPLOYMENT_TYPE, deployment, namespace="ns", now=0, rng=random.Random(), keep_status=False
    )


def test_uids_are_reproducible_with_a_seeded_random() -> None:
    assert objects.new_uid(random.Random(5)) == objects.new_uid(random.Random(5))


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"metadata": {"name": "p", "namespace": "other"}}, 400),
        ({"metadata": {"name": "p", "resourceVersion": "5"}}, 400),
        ({"metadata": {}}, 422),
        ({"metadata": {"name": "UPPER"}}, 422),
    ],
)
def test_prepare_create_refuses(body: dict[str, object], code: int) -> None:
    envelope = objects.check_envelope(POD_TYPE, body)
    with pytest.raises(ApiError) as caught:
        objects.prepare_create(
            POD_TYPE, envelope, namespace="ns", now=0, rng=random.Random(), keep_status=False
        )
    assert caught.value.code == code


def test_envelope_checks() -> None:
    with pytest.raises(ApiError):
        objects.check_envelope(POD_TYPE, [1])
    with pytest.raises(ApiError):
        objects.check_envelope(POD_TYPE, {"kind": "Pod", "apiVersion": "v2"})
    with pytest.raises(ApiError):
        objects.check_envelope(POD_TYPE, {"metadata": "x"})
    assert objects.check_envelope(POD_TYPE, {})["kind"] == "Pod"
    assert objects.spec_changed({"spec": {"a": 1}, "status": {}}, {"spec": {"a": 2}})
    assert not objects.spec_changed(
        {"spec": {"a": 1}, "status": {"x": 1}}, {"spec": {"a": 1}, "metadata": {}}
    )
