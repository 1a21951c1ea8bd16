"""GPU requests of the pods on this node, from the kubelet's /pods, by Kubernetes' own rule.

A pod counts once (the original counted a pod once per GPU container, REFERENCE.md 15.1 #1).
Its effective request per resource follows the scheduler: the larger of its app containers
(plus restartable sidecar init containers) and its largest init container (plus the sidecars
started before it), plus pod overhead; a container's request defaults to its limit. Pods that
finished (Succeeded, Failed) hold no devices and are not counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from lens.runtime import errors
from lens.runtime.families import FamilyGroup, FamilySpec

FINISHED_PHASES = frozenset({"Succeeded", "Failed"})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodGpuRequest:
    namespace: str
    name: str
    uid: str
    phase: str
    requests: tuple[tuple[str, int], ...]  # (resource, devices)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuAllocation:
    """What the pods on this node request, by resource."""

    pods: tuple[PodGpuRequest, ...]

    def requested(self, resource: str | None = None) -> int:
        return sum(
            count
            for pod in self.pods
            for name, count in pod.requests
            if resource is None or name == resource
        )

    def by_resource(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for pod in self.pods:
            for name, count in pod.requests:
                totals[name] = totals.get(name, 0) + count
        return totals


QUANTITY_MOST = 2**63 - 1  # a Kubernetes quantity is an int64 at most


def parse_quantity(value: object) -> int:
    """An extended resource quantity ("8", 8, "8000m") as a whole number of devices."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise errors.SourceError(f"kubelet /pods: a resource quantity is a {type(value).__name__}")
    text = str(value).strip()
    try:
        devices = _devices(text)
    except (ValueError, OverflowError) as exc:  # OverflowError: "1e999" is infinity
        raise errors.SourceError(f"kubelet /pods: bad resource quantity {text[:40]!r}") from exc
    if abs(devices) > QUANTITY_MOST:
        raise errors.SourceError(f"kubelet /pods: resource quantity {text[:40]!r} too large")
    return devices


def _devices(text: str) -> int:
    """Whole devices in a quantity's text: milli-units rounded down, "1e3" through a float."""
    if text.endswith("m"):
        return int(text[:-1]) // 1000
    try:
        return int(text)  # exact, where a float would round 2^63 - 1 up
    except ValueError:
        return int(float(text))


def _text(value: object) -> str:
    """A name as a label may hold it: lone surrogates (JSON's "\\ud800") replaced, no NULs;
    "" for what is no string or number (str() of a deeply nested list could even recurse)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return ""
    return str(value).encode(errors="replace").decode().replace("\0", "")


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else []


def container_request(container: object, resource: str) -> int:
    resources = _mapping(_mapping(container).get("resources"))
    requests, limits = _mapping(resources.get("requests")), _mapping(resources.get("limits"))
    value = requests.get(resource, limits.get(resource))
    return 0 if value is None else parse_quantity(value)


def effective_request(spec: Mapping[str, object], resource: str) -> int:
    """The pod's request for `resource` as the scheduler computes it (sidecars included)."""
    sidecars = 0
    init_peak = 0
    for init in _list(spec.get("initContainers")):
        request = container_request(init, resource)
        if _mapping(init).get("restartPolicy") == "Always":
            sidecars += request
        else:
            init_peak = max(init_peak, sidecars + request)
    apps = sum(container_request(c, resource) for c in _list(spec.get("containers"))) + sidecars
    overhead = _mapping(spec.get("overhead")).get(resource)
    return max(apps, init_peak) + (0 if overhead is None else parse_quantity(overhead))


def parse_pod_list(document: object, resources: Iterable[str]) -> GpuAllocation:
    """kubelet /pods (a PodList) -> the GPU requests of unfinished pods."""
    items = _mapping(document).get("items")
    if not isinstance(items, list):
        raise errors.SourceError("kubelet /pods: not a PodList (no items)")
    wanted = tuple(resources)
    pods = []
    for pod in items:
        metadata, spec = (
            _mapping(_mapping(pod).get("metadata")),
            _mapping(_mapping(pod).get("spec")),
        )
        phase = _text(_mapping(_mapping(pod).get("status")).get("phase", "Pending"))
        if phase in FINISHED_PHASES:
            continue
        requests = tuple(
            (resource, count)
            for resource in wanted
            if (count := effective_request(spec, resource)) > 0
        )
        if requests:
            pods.append(
                PodGpuRequest(
                    namespace=_text(metadata.get("namespace", "")),
                    name=_text(metadata.get("name", "")),
                    uid=_text(metadata.get("uid", "")),
                    phase=phase,
                    requests=requests,
                )
            )
    return GpuAllocation(pods=tuple(pods))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRequest:
    resource: str
    devices: int


FAMILIES: FamilyGroup[ResourceRequest] = FamilyGroup(
    identity_labels=("resource",),
    identity=lambda r: (r.resource,),
    specs=(
        FamilySpec(
            name="lens_kube_node_gpu_requested",
            help="Devices of a GPU resource requested by this node's unfinished pods (kubelet).",
            type="gauge",
            samples=lambda r: [((), float(r.devices))],
        ),
    ),
)


def requests_of(allocation: GpuAllocation, resources: Iterable[str]) -> list[ResourceRequest]:
    """One ResourceRequest per resource in `resources` (0 when nothing asks for it)."""
    totals = allocation.by_resource()
    return [ResourceRequest(resource=r, devices=totals.get(r, 0)) for r in resources]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AllocationRate:
    """Requested GPUs as a percentage of the node's GPUs (device-plugin units)."""

    percent: float


COMPAT_FAMILIES: FamilyGroup[AllocationRate] = FamilyGroup(
    identity_labels=(),
    identity=lambda r: (),
    specs=(
        FamilySpec(
            name="node_k8s_gpu_allocation_rate",
            help="GPUs requested by this node's unfinished pods as a percentage of its GPUs, "
            "each pod counted once (the original exporter's name).",
            type="gauge",
            samples=lambda r: [((), r.percent)],
            stability="stable",
        ),
    ),
)
