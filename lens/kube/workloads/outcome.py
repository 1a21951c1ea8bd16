"""How a workload ended, as Kubernetes tells it (pure): the terminal condition its controller
set — a Job's Complete or Failed, a Kubeflow training job's Succeeded or Failed, a JobSet's
Completed or Failed — and why a pod failed (OOMKilled, Evicted, DeadlineExceeded, Error...).

rows.py turns these into a workload's status and reason.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from lens.runtime.timestamps import parse_rfc3339

JsonObject = dict[str, Any]

SUCCEEDED = "Succeeded"
FAILED = "Failed"

# Condition types that end a workload, by what they say: Job (batch/v1) Complete and Failed;
# Kubeflow's training jobs (PyTorchJob, MPIJob, ...) Succeeded and Failed; JobSet Completed
# and Failed. Other conditions (Suspended, Running, Restarting...) end nothing.
_SUCCESS_TYPES = frozenset({"Complete", "Completed", "Succeeded"})
_FAILURE_TYPES = frozenset({"Failed"})
# A failed container's terminated reason says more than the pod's phase; "Completed" and
# "Error" say least, so a container that says more is preferred.
_VAGUE_REASONS = ("Error", "Completed", "")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """A workload's terminal condition: Succeeded or Failed, why, and since when."""

    status: str
    reason: str
    at: datetime.datetime | None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def terminal_condition(obj: JsonObject) -> Ending | None:
    """The condition of `obj`'s status that ended it (status "True"); a failure wins over a
    success should both be set; None while it has not ended (or it is a kind that never ends,
    a Deployment)."""
    found: Ending | None = None
    for raw in _list(_mapping(obj.get("status")).get("conditions")):
        condition = _mapping(raw)
        if str(condition.get("status")) != "True":
            continue
        kind = str(condition.get("type") or "")
        at = parse_rfc3339(condition.get("lastTransitionTime"))
        reason = str(condition.get("reason") or "")
        if kind in _FAILURE_TYPES:
            return Ending(status=FAILED, reason=reason or FAILED, at=at)
        if kind in _SUCCESS_TYPES and found is None:
            found = Ending(status=SUCCEEDED, reason="", at=at)
    return found


def pod_failure_reason(pod: JsonObject) -> str:
    """Why a Failed pod failed: its status reason (Evicted, DeadlineExceeded...), else the
    most telling reason among its terminated containers (OOMKilled over Error), else Error."""
    status = _mapping(pod.get("status"))
    if status.get("reason"):
        return str(status["reason"])
    reasons = []
    for raw in _list(status.get("containerStatuses")):
        terminated = _mapping(_mapping(_mapping(raw).get("state")).get("terminated"))
        if terminated and int(terminated.get("exitCode") or 0) != 0:
            reasons.append(str(terminated.get("reason") or ""))
    telling = [r for r in reasons if r not in _VAGUE_REASONS]
    return telling[0] if telling else "Error"
