"""Pods by address: the workload a pod belongs to, host-network and finished pods left out, an
address passed from one pod to another, and any JSON at all taken without a foreign error."""

from __future__ import annotations

import ipaddress
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lens.netflow.peerpods import (
    PeerPod,
    PeerPodIndex,
    naming_fields,
    pod_addresses,
    workload_of,
)


def _pod(
    name: str,
    ip: str | list[str],
    *,
    uid: str = "",
    owner: tuple[str, str] | None = None,
    template_hash: str = "",
    phase: str = "Running",
    host_network: bool = False,
    created: str = "2026-11-28T09:00:00Z",
    deleting: bool = False,
) -> dict[str, Any]:
    ips = [ip] if isinstance(ip, str) else ip
    metadata: dict[str, Any] = {"name": name, "namespace": "ml", "uid": uid or f"uid-{name}"}
    metadata["creationTimestamp"] = created
    if deleting:
        metadata["deletionTimestamp"] = "2026-11-28T12:00:00Z"
    if owner is not None:
        kind, owner_name = owner
        metadata["ownerReferences"] = [
            {"kind": "Node", "name": "n1"},  # not the controller: not the workload
            {"apiVersion": "apps/v1", "kind": kind, "name": owner_name, "controller": True},
        ]
    if template_hash:
        metadata["labels"] = {"pod-template-hash": template_hash, "app": "x"}
    return {
        "metadata": metadata,
        "spec": {"hostNetwork": host_network},
        "status": {"phase": phase, "podIP": ips[0], "podIPs": [{"ip": i} for i in ips]},
    }


def test_a_deployments_pod_is_named_by_the_deployment() -> None:
    owner = ("ReplicaSet", "web-7d9f8")
    pod = _pod("web-7d9f8-abcde", "10.244.1.5", owner=owner, template_hash="7d9f8")
    found = pod_addresses(pod)
    assert found is not None
    assert found.pod == PeerPod(
        namespace="ml", pod="web-7d9f8-abcde", workload_kind="Deployment", workload="web"
    )
    assert found.addresses == (ipaddress.ip_address("10.244.1.5"),)


def _workload(name: str, **pod: Any) -> tuple[str, str]:
    return workload_of(_pod(name, "10.0.0.1", **pod)["metadata"])


def test_the_workload_is_the_controlling_owner_or_the_pod_itself() -> None:
    # A ReplicaSet not named after the hash (made by hand, not by a Deployment) stays one.
    mine = _workload("a", owner=("ReplicaSet", "mine"), template_hash="zz")
    assert mine == ("ReplicaSet", "mine")
    assert _workload("t-0", owner=("StatefulSet", "t")) == ("StatefulSet", "t")
    assert _workload("j-x", owner=("Job", "j")) == ("Job", "j")
    assert _workload("bare") == ("Pod", "bare")
    # "-" + hash with nothing before it is no Deployment's name.
    assert _workload("x", owner=("ReplicaSet", "-h"), template_hash="h") == ("ReplicaSet", "-h")


def test_dual_stack_pods_are_found_by_either_address() -> None:
    index = PeerPodIndex()
    index.put(_pod("d", ["10.244.1.9", "fd00::9"]))
    for address in ("10.244.1.9", "fd00::9"):
        found = index.get(ipaddress.ip_address(address))
        assert found is not None and found.pod == "d"
    assert len(index) == 2


def test_host_network_and_finished_pods_name_no_peer() -> None:
    index = PeerPodIndex()
    index.put(_pod("agent", "192.168.0.10", host_network=True))
    index.put(_pod("done", "10.244.1.7", phase="Succeeded"))
    assert index.get(ipaddress.ip_address("192.168.0.10")) is None
    assert index.get(ipaddress.ip_address("10.244.1.7")) is None
    # A running pod that finishes lets go of its address.
    index.put(_pod("job", "10.244.1.8"))
    index.put(_pod("job", "10.244.1.8", phase="Failed"))
    assert index.get(ipaddress.ip_address("10.244.1.8")) is None and len(index) == 0


def _holder(index: PeerPodIndex, address: str) -> str | None:
    found = index.get(ipaddress.ip_address(address))
    return found.pod if found is not None else None


def test_an_address_claimed_by_two_pods_is_the_newer_ones_whatever_comes_last() -> None:
    old = _pod("old", "10.244.2.3", created="2026-11-28T10:00:00Z")
    new = _pod("new", "10.244.2.3", created="2026-11-28T10:05:00Z")
    for order in ([old, new], [new, old]):  # a relist gives them in any order
        index = PeerPodIndex()
        for pod in order:
            index.put(pod)
        assert _holder(index, "10.244.2.3") == "new"
    index.put(old)  # a late update of the old pod does not take it back
    assert _holder(index, "10.244.2.3") == "new"
    index.put(_pod("old", "10.244.2.3", created="2026-11-28T10:00:00Z", phase="Failed"))
    assert _holder(index, "10.244.2.3") == "new"  # ...nor does its end drop it
    index.remove(new)
    assert _holder(index, "10.244.2.3") is None and len(index) == 0


def test_a_pod_being_deleted_yields_its_address_to_a_newer_claimant_and_back() -> None:
    index = PeerPodIndex()
    going = _pod("going", "10.244.2.4", created="2026-11-28T11:00:00Z", deleting=True)
    staying = _pod("staying", "10.244.2.4", created="2026-11-28T10:00:00Z")
    index.put(going)
    assert _holder(index, "10.244.2.4") == "going"
    index.put(staying)
    assert _holder(index, "10.244.2.4") == "staying"
    index.remove(staying)
    assert _holder(index, "10.244.2.4") == "going"


def test_the_naming_fields_name_a_pod_as_the_whole_does() -> None:
    owner = ("ReplicaSet", "web-7d9f8")
    pod = _pod("web-7d9f8-a", "10.244.1.5", owner=owner, template_hash="7d9f8", deleting=True)
    pod["metadata"] |= {"resourceVersion": "7", "annotations": {"a": "x" * 100}}
    pod["spec"]["containers"] = [{"name": "c", "env": [{"name": "SECRET", "value": "v"}]}]
    kept = naming_fields(pod)
    assert pod_addresses(kept) == pod_addresses(pod)
    assert kept["metadata"]["resourceVersion"] == "7"  # type: ignore[index]
    assert kept["metadata"]["labels"] == {"pod-template-hash": "7d9f8"}  # type: ignore[index]
    assert "annotations" not in kept["metadata"] and kept["spec"] == {}  # type: ignore[operator]
    dual = _pod("d", ["10.244.1.9", "fd00::9"])
    assert pod_addresses(naming_fields(dual)) == pod_addresses(dual)
    assert naming_fields({"metadata": "not a map"}) == {"metadata": {}, "spec": {}, "status": {}}
    assert naming_fields("not a pod") == {"metadata": {}, "spec": {}, "status": {}}


def test_a_pod_whose_address_changes_lets_go_of_the_old_one() -> None:
    index = PeerPodIndex()
    index.put(_pod("p", "10.244.3.1"))
    index.put(_pod("p", "10.244.3.2"))
    assert index.get(ipaddress.ip_address("10.244.3.1")) is None
    found = index.get(ipaddress.ip_address("10.244.3.2"))
    assert found is not None and found.pod == "p"


def test_pods_without_a_uid_or_with_bad_addresses_are_skipped() -> None:
    index = PeerPodIndex()
    index.put(_pod("no-uid", "10.0.0.1", uid="") | {"metadata": {"name": "no-uid"}})
    index.put(_pod("bad", ["not-an-ip", "10.0.0.300"]))
    index.put("a string, not a pod")
    assert len(index) == 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "spec",
                    "status",
                    "uid",
                    "name",
                    "ownerReferences",
                    "labels",
                    "podIP",
                    "podIPs",
                    "ip",
                    "phase",
                    "hostNetwork",
                    "kind",
                    "controller",
                    "pod-template-hash",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(_JSON, _JSON)
def test_any_json_is_a_pod_or_nothing(first: object, second: object) -> None:
    index = PeerPodIndex()
    for obj in (first, second, naming_fields(first)):
        found = pod_addresses(obj)
        addresses = found.addresses if found is not None else ()
        assert all(isinstance(a, ipaddress.IPv4Address | ipaddress.IPv6Address) for a in addresses)
        index.put(obj)
    index.remove(first)
    index.remove(second)
    assert len(index) == 0
