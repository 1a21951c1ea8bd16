"""The played scenario's device plugin: each pod gets the GPUs the scheduler chose for it."""

from __future__ import annotations

from typing import Any

from lens.sim.kubelet.devices import Device
from lens.sim.scenario.kubelets import TruthAllocator
from lens.sim.scenario.truth import Truth, WorkloadRef

GPUS = [Device(f"0000:{bus:02x}:00.0", 0) for bus in range(8)]
JOB = WorkloadRef(kind="Job", name="j", namespace="ml", uid="w")


def _pod(uid: str, gpus: int) -> dict[str, Any]:
    limits = {"amd.com/gpu": str(gpus), "cpu": "4"}
    return {
        "metadata": {"uid": uid, "name": f"pod-{uid}", "namespace": "ml"},
        "spec": {"containers": [{"name": "main", "resources": {"limits": limits}}]},
    }


def test_a_pod_gets_the_gpus_it_holds_in_the_truth() -> None:
    truth = Truth({"n": 8, "m": 8}, {})
    truth.bind(
        pod_uid="u1", namespace="ml", pod_name="pod-u1", workload=JOB, node="n", gpus=(2, 5), at=0
    )
    allocator = TruthAllocator({"amd.com/gpu": GPUS}, truth=truth, node="n")
    (given,) = allocator.assignments(_pod("u1", 2))
    assert (given.container, given.resource, given.devices) == (
        "main",
        "amd.com/gpu",
        (GPUS[2], GPUS[5]),
    )


def test_pods_the_truth_does_not_place_here_get_what_the_kubelet_would_give() -> None:
    truth = Truth({"n": 8, "m": 8}, {})
    truth.bind(
        pod_uid="u2", namespace="ml", pod_name="pod-u2", workload=JOB, node="m", gpus=(0,), at=0
    )
    allocator = TruthAllocator({"amd.com/gpu": GPUS}, truth=truth, node="n")
    (elsewhere,) = allocator.assignments(_pod("u2", 1))
    (unknown,) = allocator.assignments(_pod("u3", 2))
    assert elsewhere.devices == (GPUS[0],) and unknown.devices == (GPUS[1], GPUS[2])
