"""GPU pods as the controller stores them: which pods count, their row, their transitions.

Pure functions over the API's pod JSON. A pod is a GPU pod when its effective request (the
scheduler's rule: app containers plus sidecars, or the largest init container) of any of the
configured resources is above zero. A transition is a phase change or a condition whose status
or lastTransitionTime changed; each is stamped with its own time, not the time it was seen, so
a relist after a restart produces the same rows again (and the store keeps them once).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lens.kube.kubelet.allocation import effective_request
from lens.runtime.timestamps import parse_rfc3339

JsonObject = dict[str, Any]

DEFAULT_GPU_RESOURCES = ("amd.com/gpu", "nvidia.com/gpu")
PHASE_EVENT = "Phase"
FINISHED = ("Succeeded", "Failed")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodTransition:
    event_type: str  # a condition type (PodScheduled, Ready, ...) or "Phase"
    status: str  # the condition's status, or the new phase
    phase: str  # the pod's phase after the transition
    restart_count: int
    at: datetime.datetime


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def gpu_count(pod: JsonObject, resources: Iterable[str]) -> int:
    spec = _mapping(pod.get("spec"))
    return sum(effective_request(spec, resource) for resource in resources)


def metadata(pod: JsonObject) -> Mapping[str, Any]:
    return _mapping(pod.get("metadata"))


def phase(pod: JsonObject) -> str:
    return str(_mapping(pod.get("status")).get("phase") or "Pending")


def restart_count(pod: JsonObject) -> int:
    statuses = _list(_mapping(pod.get("status")).get("containerStatuses"))
    return sum(int(_mapping(s).get("restartCount") or 0) for s in statuses)


def resource_version(obj: JsonObject) -> int:
    """The object's resourceVersion as a number (0 when it is not one)."""
    text = str(metadata(obj).get("resourceVersion") or "0")
    return int(text) if text.isdigit() else 0


def created_at(pod: JsonObject) -> datetime.datetime | None:
    return parse_rfc3339(metadata(pod).get("creationTimestamp"))


def deleted_at(pod: JsonObject) -> datetime.datetime | None:
    return parse_rfc3339(metadata(pod).get("deletionTimestamp"))


def started_at(pod: JsonObject) -> datetime.datetime | None:
    """When the pod started on its node (status.startTime), else when it was created."""
    return parse_rfc3339(_mapping(pod.get("status")).get("startTime")) or created_at(pod)


def finished_at(pod: JsonObject) -> datetime.datetime | None:
    """For a Succeeded or Failed pod, when its last container finished."""
    if phase(pod) not in FINISHED:
        return None
    known = _container_times(pod, "terminated", "finishedAt")
    return max(known) if known else _latest_condition_time(pod)


def controller_reference(obj: JsonObject) -> Mapping[str, Any] | None:
    """The ownerReference that controls `obj` (the first when none says so); None at the top."""
    references = [
        r
        for r in _list(metadata(obj).get("ownerReferences"))
        if isinstance(r, Mapping) and r.get("uid")
    ]
    controlling = [r for r in references if r.get("controller")] or references
    return controlling[0] if controlling else None


def owner_uid(obj: JsonObject) -> str:
    """The controlling owner's uid; "" at the top."""
    reference = controller_reference(obj)
    return str(reference.get("uid")) if reference is not None else ""


def phase_time(pod: JsonObject) -> datetime.datetime | None:
    """When the pod entered its current phase, as near as its status tells."""
    current = phase(pod)
    if current in FINISHED:
        return finished_at(pod)
    if current == "Running":
        known = _container_times(pod, "running", "startedAt")
        return min(known) if known else started_at(pod)
    return created_at(pod)


def _container_times(pod: JsonObject, state: str, field: str) -> list[datetime.datetime]:
    """The `field` times of the containers whose state is `state` (running, terminated)."""
    statuses = _list(_mapping(pod.get("status")).get("containerStatuses"))
    times = [
        parse_rfc3339(_mapping(_mapping(_mapping(s).get("state")).get(state)).get(field))
        for s in statuses
    ]
    return [t for t in times if t is not None]


def last_change(pod: JsonObject) -> datetime.datetime | None:
    """The latest moment the pod's status or deletion names (its own update time)."""
    times = [
        _latest_condition_time(pod),
        phase_time(pod),
        deleted_at(pod),
        created_at(pod),
    ]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _latest_condition_time(pod: JsonObject) -> datetime.datetime | None:
    times = [parse_rfc3339(_mapping(c).get("lastTransitionTime")) for c in _conditions(pod)]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _conditions(pod: JsonObject) -> list[Mapping[str, Any]]:
    status = _mapping(pod.get("status"))
    return [c for c in _list(status.get("conditions")) if isinstance(c, Mapping)]


def transitions(old: JsonObject | None, new: JsonObject) -> list[PodTransition]:
    """What changed from `old` (None: never seen) to `new`: conditions, then the phase."""
    before = {str(c.get("type")): c for c in _conditions(old)} if old is not None else {}
    restarts, current = restart_count(new), phase(new)
    fallback = created_at(new) or datetime.datetime.now(datetime.UTC)
    found: list[PodTransition] = []
    for condition in _conditions(new):
        kind = str(condition.get("type") or "")
        previous = before.get(kind)
        same = previous is not None and (
            previous.get("status"),
            previous.get("lastTransitionTime"),
        ) == (condition.get("status"), condition.get("lastTransitionTime"))
        if kind and not same:
            found.append(
                PodTransition(
                    event_type=kind,
                    status=str(condition.get("status") or ""),
                    phase=current,
                    restart_count=restarts,
                    at=parse_rfc3339(condition.get("lastTransitionTime")) or fallback,
                )
            )
    if old is None or phase(old) != current:
        found.append(
            PodTransition(
                event_type=PHASE_EVENT,
                status=current,
                phase=current,
                restart_count=restarts,
                at=phase_time(new) or fallback,
            )
        )
    return found


def snapshot_digest(pod: JsonObject) -> str:
    """Equal for two versions of a pod with the same spec, labels, deletion and status: a new
    snapshot is worth storing only when this changes."""
    meta = metadata(pod)
    body = {
        "labels": meta.get("labels"),
        "deletionTimestamp": meta.get("deletionTimestamp"),
        "spec": pod.get("spec"),
        "status": pod.get("status"),
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
