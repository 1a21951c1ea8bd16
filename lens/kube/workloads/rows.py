"""A workload's row from its object and the GPU pods beneath it (pure).

Status follows the original's jobs (REFERENCE.md 5.5), computed from the watch caches instead
of GETs: Running while any of its GPU pods is neither finished nor deleted, Done when all are,
Deleted once the object is being deleted or gone. The GPU request is what its live pods
request; a workload with no live pod keeps the request last stored, or, first seen when all
its pods had finished, is stored with what they requested.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from typing import Any

from lens.kube.workloads import gpupods

JsonObject = dict[str, Any]

RUNNING = "Running"
DONE = "Done"
DELETED = "Deleted"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadState:
    uid: str
    group_version: str
    kind: str
    namespace: str
    name: str
    parent_uid: str
    labels: dict[str, str]
    status: str
    gpu_request: int
    request_is_live: bool  # False: no live pod; a stored request is kept, this one only inserted
    created_at: datetime.datetime
    end_at: datetime.datetime | None
    pod_uids: tuple[str, ...]


def is_live(pod: JsonObject) -> bool:
    return gpupods.phase(pod) not in gpupods.FINISHED and gpupods.deleted_at(pod) is None


def state(
    obj: JsonObject,
    pods: Sequence[JsonObject],
    *,
    resources: Sequence[str],
    gone: bool,
    now: datetime.datetime,
) -> WorkloadState:
    """The row of workload `obj` with GPU pods `pods`; `gone`: the object was deleted."""
    meta = gpupods.metadata(obj)
    live = [p for p in pods if is_live(p)]
    deleting = gpupods.deleted_at(obj)
    finished = [gpupods.finished_at(p) or gpupods.deleted_at(p) for p in pods]
    all_done = max((t for t in finished if t is not None), default=now) if pods else None
    end_at: datetime.datetime | None = None
    if gone or deleting is not None:
        status = DELETED
        end_at = all_done if all_done is not None and not live else (deleting or now)
    elif live:
        status = RUNNING
    else:
        status = DONE
        end_at = all_done or now
    request = sum(gpupods.gpu_count(p, resources) for p in (live or pods))
    return WorkloadState(
        uid=str(meta.get("uid") or ""),
        group_version=str(obj.get("apiVersion") or ""),
        kind=str(obj.get("kind") or ""),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        parent_uid=gpupods.owner_uid(obj),
        labels=dict(meta.get("labels") or {}),
        status=status,
        gpu_request=request,
        request_is_live=bool(live),
        created_at=gpupods.created_at(obj) or now,
        end_at=end_at,
        pod_uids=tuple(str(gpupods.metadata(p).get("uid")) for p in pods),
    )
