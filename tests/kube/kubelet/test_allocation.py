"""GPU allocation by Kubernetes' effective-request rule; each pod counted once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.kube.kubelet import allocation
from lens.kube.kubelet.allocation import GpuAllocation
from lens.kube.kubelet.client import KubeletClient
from lens.runtime import errors, families
from lens.runtime.textformat import TextRenderer

from ..conftest import Kubelet

AMD = "amd.com/gpu"


def _container(name: str, gpus: int = 0, *, request: bool = False, **extra: object) -> dict:
    key = "requests" if request else "limits"
    resources = {key: {AMD: str(gpus)}} if gpus else {}
    return {"name": name, "resources": resources, **extra}


def _pod(spec: dict, phase: str = "Running", name: str = "p") -> dict:
    return {
        "metadata": {"name": name, "namespace": "ml", "uid": f"u-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


def _allocated(*pods: dict) -> GpuAllocation:
    return allocation.parse_pod_list({"kind": "PodList", "items": list(pods)}, [AMD])


def test_parse_quantity() -> None:
    assert allocation.parse_quantity("8") == 8 and allocation.parse_quantity(4) == 4
    assert allocation.parse_quantity("2000m") == 2
    with pytest.raises(errors.SourceError, match="bad resource quantity 'lots'"):
        allocation.parse_quantity("lots")


def test_a_pod_with_two_gpu_containers_counts_once() -> None:
    result = _allocated(_pod({"containers": [_container("a", 4), _container("b", 4)]}))
    assert len(result.pods) == 1 and result.requested(AMD) == 8, "not 16 (REFERENCE 15.1 #1)"


def test_requests_default_to_limits_and_requests_win() -> None:
    spec = {"containers": [_container("a", 2, request=True), _container("b", 1)]}
    assert _allocated(_pod(spec)).requested() == 3


def test_init_containers_follow_the_effective_request_rule() -> None:
    bigger_init = {"initContainers": [_container("warm", 8)], "containers": [_container("a", 2)]}
    assert _allocated(_pod(bigger_init)).requested() == 8
    smaller_init = {"initContainers": [_container("warm", 1)], "containers": [_container("a", 4)]}
    assert _allocated(_pod(smaller_init)).requested() == 4


def test_sidecars_add_to_the_app_and_to_later_inits() -> None:
    spec = {
        "initContainers": [
            _container("proxy", 1, restartPolicy="Always"),
            _container("warm", 4),
        ],
        "containers": [_container("a", 2)],
    }
    assert _allocated(_pod(spec)).requested() == 5, "max(2 + 1, 1 + 4)"


def test_overhead_counts() -> None:
    spec = {"containers": [_container("a", 2)], "overhead": {AMD: "1"}}
    assert _allocated(_pod(spec)).requested() == 3


def test_finished_pods_and_pods_without_gpus_are_left_out() -> None:
    result = _allocated(
        _pod({"containers": [_container("a", 8)]}, "Succeeded", "done"),
        _pod({"containers": [_container("a", 8)]}, "Failed", "failed"),
        _pod({"containers": [_container("a")]}, "Running", "cpu"),
        _pod({"containers": [_container("a", 2)]}, "Pending", "starting"),
    )
    assert [(p.name, p.phase, p.requests) for p in result.pods] == [
        ("starting", "Pending", ((AMD, 2),))
    ]


def test_several_resources() -> None:
    nvidia = {"name": "n", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    result = allocation.parse_pod_list(
        {"items": [_pod({"containers": [_container("a", 2), nvidia]})]}, [AMD, "nvidia.com/gpu"]
    )
    assert result.by_resource() == {AMD: 2, "nvidia.com/gpu": 1}
    assert [(r.resource, r.devices) for r in allocation.requests_of(result, [AMD, "x/gpu"])] == [
        (AMD, 2),
        ("x/gpu", 0),
    ]


def test_not_a_pod_list() -> None:
    with pytest.raises(errors.SourceError, match="not a PodList"):
        allocation.parse_pod_list({"kind": "Status"}, [AMD])
    with pytest.raises(errors.SourceError, match="not a PodList"):
        allocation.parse_pod_list(["x"], [AMD])


def test_families_are_valid() -> None:
    families.check_groups([allocation.FAMILIES])


def test_through_the_simulated_kubelet(kubelet: Kubelet) -> None:
    kubelet.add_pod("train-0", {"containers": [_container("a", 4), _container("b", 4)]})
    kubelet.add_pod("infer-0", {"containers": [_container("a", 1)]}, phase="Pending")
    kubelet.add_pod("done-0", {"containers": [_container("a", 8)]}, phase="Succeeded")
    result = allocation.parse_pod_list(KubeletClient(kubelet.config).get_json("/pods"), [AMD])
    assert sorted(p.name for p in result.pods) == ["infer-0", "train-0"]
    assert result.requested(AMD) == 9


@pytest.mark.parametrize("quantity", ["1e999", "-1e999", "nan", "inf"])
def test_a_quantity_that_is_no_finite_number_is_a_source_error(quantity: str) -> None:
    # Issue 16, point 10: "1e999" raised OverflowError, not a Lens error.
    with pytest.raises(errors.SourceError, match="bad resource quantity"):
        allocation.parse_quantity(quantity)


def test_a_quantity_beyond_an_int64_is_a_source_error() -> None:
    # "9" * 400 + "m" was kept as 10^397 devices, which no float holds: rendering the request
    # and the allocation rate raised OverflowError, out of the whole cycle.
    with pytest.raises(errors.SourceError, match="too large"):
        allocation.parse_quantity("9" * 400 + "m")
    with pytest.raises(errors.SourceError, match="too large"):
        allocation.parse_quantity(str(2**63))
    assert allocation.parse_quantity(str(2**63 - 1)) == 2**63 - 1


@pytest.mark.parametrize("quantity", [[1], {"a": 1}, True, None])
def test_a_quantity_that_is_no_scalar_is_a_source_error(quantity: object) -> None:
    with pytest.raises(errors.SourceError, match="a resource quantity is a"):
        allocation.parse_quantity(quantity)


def test_names_become_label_safe_text() -> None:
    # A lone surrogate ("\ud800" in the JSON) made /metrics fail to encode; str() of a deeply
    # nested list could recurse past the limit.
    pod = _pod({"containers": [_container("a", 1)]}, name="p\ud800\0")
    pod["metadata"]["namespace"] = [[["ml"]]]
    (request,) = _allocated(pod).pods
    assert (request.name, request.namespace) == ("p?", "")


QUANTITIES = st.one_of(
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["1", "8", "2000m", "1e999", "-1", str(2**63), "nan"]),
)
CONTAINERS = st.lists(
    st.fixed_dictionaries(
        {"resources": st.fixed_dictionaries({"limits": st.dictionaries(st.just(AMD), QUANTITIES)})},
        optional={"restartPolicy": st.sampled_from(["Always", "Never", 7])},
    ),
    max_size=3,
)
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
PODS = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.one_of(JSON, st.fixed_dictionaries({"name": JSON, "namespace": JSON})),
        "spec": st.one_of(
            JSON,
            st.fixed_dictionaries(
                {"containers": CONTAINERS},
                optional={
                    "initContainers": CONTAINERS,
                    "overhead": st.dictionaries(st.just(AMD), QUANTITIES),
                },
            ),
        ),
        "status": st.one_of(JSON, st.fixed_dictionaries({"phase": JSON})),
    },
)


@given(st.one_of(JSON, st.fixed_dictionaries({"items": st.lists(PODS, max_size=4)})))
def test_any_pod_list_is_an_allocation_or_a_source_error(document: object) -> None:
    try:
        result = allocation.parse_pod_list(document, [AMD])
    except errors.SourceError:
        return
    requests = allocation.requests_of(result, [AMD])
    rate = allocation.AllocationRate(percent=100 * result.requested() / 8)
    TextRenderer().render_groups(
        [(allocation.FAMILIES, requests), (allocation.COMPAT_FAMILIES, [rate])], opt_in=frozenset()
    ).encode()
