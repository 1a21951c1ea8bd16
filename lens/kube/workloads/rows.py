"""A workload's row from its object and the GPU pods beneath it (pure).

Status follows Kubernetes, computed from the watch caches (the original GET each workload and
said only Running, Done or Deleted, REFERENCE.md 5.5):

* Succeeded or Failed when its controller set a terminal condition (a Job's Complete or Failed,
  with the condition's reason: BackoffLimitExceeded, DeadlineExceeded...; outcome.py), and so
  it stays when the finished object is deleted (a Job's TTL);
* Deleted once the object is being deleted or gone before it ended (`deleted_at` says when the
  object went, whatever its status);
* Running while any of its GPU pods runs; Pending while its live pods all wait (unscheduled,
  pulling images);
* with no live pod left and no terminal condition (a Deployment scaled to nothing, a bare
  pod): Failed if one of its pods failed, with that pod's reason (OOMKilled, Evicted...), else
  Succeeded.

The GPU request is what its live pods request; a workload with no live pod keeps the request
last stored, or, first seen when all its pods had finished, is stored with what they requested.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from typing import Any

from lens.kube.workloads import gpupods, outcome

JsonObject = dict[str, Any]

PENDING = "Pending"
RUNNING = "Running"
SUCCEEDED = outcome.SUCCEEDED
FAILED = outcome.FAILED
DELETED = "Deleted"
STATUSES = (PENDING, RUNNING, SUCCEEDED, FAILED, DELETED)
ENDED = frozenset({SUCCEEDED, FAILED, DELETED})


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
    status_reason: str  # why it failed ('' unless Failed)
    gpu_request: int
    request_is_live: bool  # False: no live pod; a stored request is kept, this one only inserted
    created_at: datetime.datetime
    end_at: datetime.datetime | None
    deleted_at: datetime.datetime | None  # the object is being deleted or gone
    pod_uids: tuple[str, ...]

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


def is_live(pod: JsonObject) -> bool:
    return gpupods.phase(pod) not in gpupods.FINISHED and gpupods.deleted_at(pod) is None


def is_ended(status: str) -> bool:
    return status in ENDED


def ended_by_pods(pods: Sequence[JsonObject]) -> tuple[str, str]:
    """(status, reason) of a workload whose pods all ended, none saying more: Failed with the
    latest failed pod's reason if one failed, else Succeeded."""
    failed = [p for p in pods if gpupods.phase(p) == FAILED]
    if not failed:
        return SUCCEEDED, ""
    latest = max(failed, key=lambda p: gpupods.finished_at(p) or _EARLIEST)
    return FAILED, outcome.pod_failure_reason(latest)


_EARLIEST = datetime.datetime.min.replace(tzinfo=datetime.UTC)


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
    ending = outcome.terminal_condition(obj)
    deleted_at = (deleting or now) if gone or deleting is not None else None
    end_at: datetime.datetime | None = None
    reason = ""
    if ending is not None:
        status, reason = ending.status, ending.reason
        # When its controller said it ended; else when its last pod did.
        end_at = ending.at or (all_done if not live else None) or now
    elif deleted_at is not None:
        status = DELETED
        end_at = all_done if all_done is not None and not live else deleted_at
    elif live:
        running = any(gpupods.phase(p) == RUNNING for p in live)
        status = RUNNING if running else PENDING
    else:
        status, reason = ended_by_pods(pods)
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
        status_reason=reason,
        gpu_request=request,
        request_is_live=bool(live),
        created_at=gpupods.created_at(obj) or now,
        end_at=end_at,
        deleted_at=deleted_at,
        pod_uids=tuple(str(gpupods.metadata(p).get("uid")) for p in pods),
    )
