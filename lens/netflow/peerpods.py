"""Which pod holds a peer's address: the pods of the cluster by IP, each with its namespace and
workload, for naming the top peers (lens_netflow_peer_pod_info). Fed with pods as the API
gives them (JSON); host-network pods are left out (their address is their node's, shared by
many) and so are finished ones (their address may already be another pod's)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from lens.netflow.sockets import IPAddress

FINISHED = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerPod:
    namespace: str
    pod: str
    workload_kind: str  # the controlling owner's kind: Deployment for a Deployment's ReplicaSet
    workload: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PodAddresses:
    uid: str
    addresses: tuple[IPAddress, ...]  # empty: the pod names no peer (host network, finished)
    pod: PeerPod


def pod_addresses(obj: object) -> PodAddresses | None:
    """A pod's addresses and names; None when `obj` is no pod with a uid."""
    if not isinstance(obj, dict):
        return None
    metadata, spec, status = (_section(obj, key) for key in ("metadata", "spec", "status"))
    uid = metadata.get("uid")
    if not isinstance(uid, str) or not uid:
        return None
    kind, workload = workload_of(metadata)
    pod = PeerPod(
        namespace=_text(metadata.get("namespace")),
        pod=_text(metadata.get("name")),
        workload_kind=kind,
        workload=workload,
    )
    if spec.get("hostNetwork") is True or status.get("phase") in FINISHED:
        return PodAddresses(uid=uid, addresses=(), pod=pod)
    return PodAddresses(uid=uid, addresses=_addresses(status), pod=pod)


def workload_of(metadata: dict[str, Any]) -> tuple[str, str]:
    """The pod's workload as (kind, name): its controlling owner — a Deployment for a ReplicaSet
    named after the pod-template-hash label, as a Deployment names its ReplicaSets — or the pod
    itself when nothing controls it."""
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if not isinstance(owner, dict) or owner.get("controller") is not True:
            continue
        kind, name = _text(owner.get("kind")), _text(owner.get("name"))
        labels = metadata.get("labels")
        template = labels.get("pod-template-hash") if isinstance(labels, dict) else None
        if kind == "ReplicaSet" and _made_by_a_deployment(name, template):
            return "Deployment", name[: -len(str(template)) - 1]
        return kind, name
    return "Pod", _text(metadata.get("name"))


class PeerPodIndex:
    """Pods by address; an address moves to the pod that last claimed it and is let go only by
    that pod."""

    def __init__(self) -> None:
        self._by_address: dict[IPAddress, tuple[str, PeerPod]] = {}
        self._by_uid: dict[str, tuple[IPAddress, ...]] = {}

    def __len__(self) -> int:
        return len(self._by_address)

    def put(self, obj: object) -> None:
        """A pod added or changed."""
        found = pod_addresses(obj)
        if found is None:
            return
        self._release(found.uid, keep=found.addresses)
        for address in found.addresses:
            self._by_address[address] = (found.uid, found.pod)
        if found.addresses:
            self._by_uid[found.uid] = found.addresses
        else:
            self._by_uid.pop(found.uid, None)

    def remove(self, obj: object) -> None:
        """A pod deleted."""
        found = pod_addresses(obj)
        if found is not None:
            self._release(found.uid, keep=())
            self._by_uid.pop(found.uid, None)

    def get(self, address: IPAddress) -> PeerPod | None:
        held = self._by_address.get(address)
        return held[1] if held is not None else None

    def _release(self, uid: str, *, keep: tuple[IPAddress, ...]) -> None:
        for address in self._by_uid.get(uid, ()):
            held = self._by_address.get(address)
            if address not in keep and held is not None and held[0] == uid:
                del self._by_address[address]


def _made_by_a_deployment(replica_set: str, template_hash: object) -> bool:
    """A Deployment names its ReplicaSets <deployment>-<pod-template-hash>."""
    if not isinstance(template_hash, str) or not template_hash:
        return False
    return replica_set.endswith("-" + template_hash) and len(replica_set) > len(template_hash) + 1


def _section(obj: dict[Any, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _addresses(status: dict[str, Any]) -> tuple[IPAddress, ...]:
    listed = status.get("podIPs")
    items = listed if isinstance(listed, list) else []
    texts = [item.get("ip") for item in items if isinstance(item, dict)]
    texts.append(status.get("podIP"))
    found: dict[IPAddress, None] = {}
    for text in texts:
        if isinstance(text, str):
            try:
                found[ipaddress.ip_address(text)] = None
            except ValueError:
                continue
    return tuple(found)
