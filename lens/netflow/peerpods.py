"""Which pod holds a peer's address: the pods of the cluster by IP, each with its namespace and
workload, for naming the top peers (lens_netflow_peer_pod_info). Fed with pods as the API
gives them (JSON); host-network pods are left out (their address is their node's, shared by
many) and so are finished ones (their address may already be another pod's)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from lens.netflow.sockets import IPAddress

FINISHED = ("Succeeded", "Failed")
_NAMING_METADATA = (
    "uid", "name", "namespace", "resourceVersion", "creationTimestamp", "deletionTimestamp"
)  # fmt: skip
JsonMap = dict[str, object]


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
    # Of two pods claiming one address (the old one's end not seen yet), the one not being
    # deleted, then the newer, holds it: ordered so, the holder is the greatest.
    rank: tuple[bool, str]


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
    rank = (not metadata.get("deletionTimestamp"), _text(metadata.get("creationTimestamp")))
    named = not (spec.get("hostNetwork") is True or status.get("phase") in FINISHED)
    addresses = _addresses(status) if named else ()
    return PodAddresses(uid=uid, addresses=addresses, pod=pod, rank=rank)


def workload_of(metadata: JsonMap) -> tuple[str, str]:
    """The pod's workload as (kind, name): its controlling owner — a Deployment for a ReplicaSet
    named after the pod-template-hash label, as a Deployment names its ReplicaSets — or the pod
    itself when nothing controls it."""
    owner = _controller(metadata)
    if owner is None:
        return "Pod", _text(metadata.get("name"))
    kind, name = _text(owner.get("kind")), _text(owner.get("name"))
    template_hash = _section(metadata, "labels").get("pod-template-hash")
    if kind == "ReplicaSet" and _made_by_a_deployment(name, template_hash):
        return "Deployment", name[: -len(str(template_hash)) - 1]
    return kind, name


def naming_fields(pod: object) -> JsonMap:
    """What pod_addresses reads of a pod — its controlling owner's kind and name, not every
    owner reference whole; a second address only for a dual-stack pod — and what a watch's
    cache needs (uid, resourceVersion): for a cache of every pod on every node."""
    whole: JsonMap = pod if isinstance(pod, dict) else {}
    metadata, spec, status = (_section(whole, key) for key in ("metadata", "spec", "status"))
    kept: JsonMap = {key: metadata[key] for key in _NAMING_METADATA if key in metadata}
    owner = _controller(metadata)
    if owner is not None:
        kept["ownerReferences"] = [
            {"kind": owner.get("kind"), "name": owner.get("name"), "controller": True}
        ]
    template_hash = _section(metadata, "labels").get("pod-template-hash")
    if template_hash is not None:
        kept["labels"] = {"pod-template-hash": template_hash}
    kept_status: JsonMap = {key: status[key] for key in ("phase", "podIP") if key in status}
    addresses = status.get("podIPs")
    if isinstance(addresses, list) and len(addresses) > 1:
        kept_status["podIPs"] = addresses
    kept_spec: JsonMap = {"hostNetwork": True} if spec.get("hostNetwork") is True else {}
    return {"metadata": kept, "spec": kept_spec, "status": kept_status}


class PeerPodIndex:
    """Pods by address. Every pod claiming an address is kept: when the holder goes, the address
    passes to the next claimant (a relist or a late update of an old pod cannot take it)."""

    def __init__(self) -> None:
        self._claims: dict[IPAddress, dict[str, PodAddresses]] = {}
        self._by_uid: dict[str, tuple[IPAddress, ...]] = {}

    def __len__(self) -> int:
        return len(self._claims)

    def put(self, obj: object) -> None:
        """A pod added or changed."""
        found = pod_addresses(obj)
        if found is None:
            return
        self._drop(found.uid)
        for address in found.addresses:
            self._claims.setdefault(address, {})[found.uid] = found
        if found.addresses:
            self._by_uid[found.uid] = found.addresses

    def remove(self, obj: object) -> None:
        """A pod deleted."""
        found = pod_addresses(obj)
        if found is not None:
            self._drop(found.uid)

    def get(self, address: IPAddress) -> PeerPod | None:
        claims = self._claims.get(address)
        if not claims:
            return None
        return max(claims.values(), key=lambda claim: claim.rank).pod

    def _drop(self, uid: str) -> None:
        for address in self._by_uid.pop(uid, ()):
            claims = self._claims.get(address, {})
            claims.pop(uid, None)
            if not claims:
                self._claims.pop(address, None)


def _controller(metadata: JsonMap) -> JsonMap | None:
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, dict) and owner.get("controller") is True:
            return owner
    return None


def _made_by_a_deployment(replica_set: str, template_hash: object) -> bool:
    """A Deployment names its ReplicaSets <deployment>-<pod-template-hash>."""
    if not isinstance(template_hash, str) or not template_hash:
        return False
    return replica_set.endswith("-" + template_hash) and len(replica_set) > len(template_hash) + 1


def _section(obj: JsonMap, key: str) -> JsonMap:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _addresses(status: JsonMap) -> tuple[IPAddress, ...]:
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
