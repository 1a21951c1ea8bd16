"""Parse what Docker Engine's API answers: `/events` messages and `/containers/{id}/json` bodies.

docker.py reads them from the socket and finds the device paths named here on the host. Every
field is checked for its type and range, so whatever Docker (or something in its place) answers
is a well-formed result or a watching.MalformedError, which the watcher counts and skips.
Field names: Docker Engine API v1.41.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

from lens.containers.node.records import RuntimeEvent, TaskRecord
from lens.containers.node.watching import MALFORMED, NOT_JSON, RECORD, MalformedError
from lens.runtime import jsontext
from lens.runtime.timestamps import parse_rfc3339

_ACTIONS = {
    "create": "/containers/create",
    "start": "/tasks/start",
    "oom": "/tasks/oom",
    "die": "/tasks/exit",
    "destroy": "/containers/delete",
}
_TASK_STATUS = {
    "created": "created",
    "running": "running",
    "restarting": "running",
    "paused": "paused",
    "exited": "stopped",
    "dead": "stopped",
    "removing": "stopped",
}
# The times a datetime holds, 0001-01-01 to 10000-01-01 UTC: anything else is no time (the event
# wire brings what it sends into the store's narrower range).
EARLIEST = -62135596800.0
LATEST = 253402300800.0
_EXIT_CODE = re.compile(r"-?[0-9]{1,10}")
_INT32 = range(-(2**31), 2**31)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuRequest:
    """NVIDIA GPUs asked for with `--gpus`: by `device_ids` (indexes or UUIDs), else `count`
    of the host's GPUs (-1: all)."""

    device_ids: tuple[str, ...]
    count: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceAsks:
    """What a container's HostConfig asks for in device nodes, before they are found on the host."""

    privileged: bool
    paths: tuple[str, ...] = ()  # HostConfig.Devices[].PathOnHost
    gpu_requests: tuple[GpuRequest, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class InspectedContainer:
    """A container as `GET /containers/{id}/json` describes it, less its state."""

    id: str
    name: str
    labels: Mapping[str, str]
    image: str
    created_at: float  # 0.0 when unset
    devices: DeviceAsks


def parse_time(text: object) -> float | None:
    """Docker's RFC 3339 times as epoch seconds; None for the zero time (unset)."""
    if text is None or text == "" or (isinstance(text, str) and text.startswith("0001-01-01")):
        return None
    if not isinstance(text, str):
        raise MalformedError(f"docker time {_shown(text)} is no string", reason=RECORD)
    try:
        moment = parse_rfc3339(text)
        seconds = None if moment is None else moment.timestamp()
    except OverflowError:  # an offset that moves a time past year 1 or 9999
        seconds = None
    if seconds is None:
        raise MalformedError(f"docker time {text[:64]!r} unreadable", reason=RECORD)
    return seconds


def parse_event_line(line: bytes) -> RuntimeEvent | None:
    """The tracker's event for one line of the /events stream; None for one it does not act on."""
    try:
        message = jsontext.loads(line)
    except jsontext.JsonError as exc:
        raise MalformedError(f"docker event is not JSON: {exc}", reason=NOT_JSON) from exc
    return parse_event(message)


def parse_event(message: object) -> RuntimeEvent | None:
    """The tracker's event for one /events message; None for actions it does not act on."""
    body = _object(message, "event", MALFORMED)
    if body.get("Type") != "container":
        return None
    action = body.get("Action")
    if not isinstance(action, str):
        raise MalformedError("docker event without an Action")
    topic = _ACTIONS.get(action)
    if topic is None:
        return None
    actor = _object(body.get("Actor"), "event Actor", MALFORMED)
    container_id = actor.get("ID") or body.get("id")
    if not isinstance(container_id, str) or not container_id:
        raise MalformedError("docker container event without a container id")
    time = _event_time(body)
    if topic != "/tasks/exit":
        return RuntimeEvent(topic=topic, container_id=container_id, time=time)
    attributes = _object(actor.get("Attributes"), "event Actor.Attributes", MALFORMED)
    code = attributes.get("exitCode")
    exit_status = None
    if isinstance(code, str) and _EXIT_CODE.fullmatch(code) and int(code) in _INT32:
        exit_status = int(code)
    return RuntimeEvent(
        topic=topic, container_id=container_id, time=time, exit_status=exit_status, exited_at=time
    )


def _event_time(body: Mapping[str, object]) -> float:
    """The event's time in seconds, from timeNano (else time)."""
    nanos, seconds = body.get("timeNano"), body.get("time")
    if nanos is not None:
        value, scale = nanos, 1e9
    elif seconds is not None:
        value, scale = seconds, 1.0
    else:
        raise MalformedError("docker event without a time")
    # Compared before dividing: an int too large for a float would overflow the division.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedError(f"docker event time {_shown(value)} is no number")
    if isinstance(value, float) and math.isnan(value):
        raise MalformedError(f"docker event time {_shown(value)} is no number")
    if not EARLIEST * scale <= value <= LATEST * scale:
        raise MalformedError(f"docker event time {_shown(value)} out of range")
    return value / scale


def parse_container(body: object) -> InspectedContainer:
    """A container from its inspect body; MalformedError when a field has no usable value."""
    found = _object(body, "inspect body", RECORD)
    container_id = found.get("Id")
    if not isinstance(container_id, str) or not container_id:
        raise MalformedError("docker container without an Id", reason=RECORD)
    config = _object(found.get("Config"), "Config", RECORD)
    labels = _object(config.get("Labels"), "Config.Labels", RECORD)
    if not all(isinstance(value, str) for value in labels.values()):
        raise MalformedError("docker Config.Labels holds a value that is no string", reason=RECORD)
    return InspectedContainer(
        id=container_id,
        name=_text(found.get("Name"), "Name").lstrip("/"),
        labels={key: str(value) for key, value in labels.items()},
        image=_text(config.get("Image"), "Config.Image"),
        created_at=parse_time(found.get("Created")) or 0.0,
        devices=_device_asks(_object(found.get("HostConfig"), "HostConfig", RECORD)),
    )


def parse_task(container_id: str, body: object) -> TaskRecord:
    """The container's task from its inspect body's State."""
    state = _object(_object(body, "inspect body", RECORD).get("State"), "State", RECORD)
    status = _TASK_STATUS.get(_text(state.get("Status"), "State.Status"), "unknown")
    exited_at = parse_time(state.get("FinishedAt")) if status == "stopped" else None
    pid, code = state.get("Pid"), state.get("ExitCode")
    if pid is None:
        pid = 0
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
        raise MalformedError(f"docker State.Pid {_shown(pid)} is no process id", reason=RECORD)
    exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
    return TaskRecord(
        container_id=container_id,
        status=status,
        pid=pid,
        exit_status=exit_code if exited_at is not None and exit_code in _INT32 else None,
        exited_at=exited_at,
    )


def _device_asks(host: Mapping[str, object]) -> DeviceAsks:
    privileged = host.get("Privileged")
    if privileged is not None and not isinstance(privileged, bool):
        raise MalformedError("docker HostConfig.Privileged is no boolean", reason=RECORD)
    paths: list[str] = []
    for entry in _list(host.get("Devices"), "HostConfig.Devices"):
        path = _object(entry, "HostConfig.Devices[]", RECORD).get("PathOnHost")
        if path is None or path == "":
            continue
        if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
            raise MalformedError(f"docker device path {_shown(path)} unusable", reason=RECORD)
        paths.append(path)
    requests = (
        _gpu_request(entry) for entry in _list(host.get("DeviceRequests"), "DeviceRequests")
    )
    return DeviceAsks(
        privileged=bool(privileged),
        paths=tuple(paths),
        gpu_requests=tuple(r for r in requests if r is not None),
    )


def _gpu_request(entry: object) -> GpuRequest | None:
    """An NVIDIA request (by driver or the gpu capability); None for another kind."""
    request = _object(entry, "DeviceRequests[]", RECORD)
    driver = _text(request.get("Driver"), "DeviceRequests[].Driver")
    groups = _list(request.get("Capabilities"), "DeviceRequests[].Capabilities")
    capabilities = [c for g in groups for c in _strings(g, "DeviceRequests[].Capabilities[]")]
    if driver != "nvidia" and "gpu" not in capabilities:
        return None
    count = request.get("Count")
    if count is None:
        count = 0
    if isinstance(count, bool) or not isinstance(count, int):
        raise MalformedError(
            f"docker DeviceRequests[].Count {_shown(count)} is no count", reason=RECORD
        )
    ids = _strings(request.get("DeviceIDs"), "DeviceRequests[].DeviceIDs")
    return GpuRequest(device_ids=ids, count=max(count, -1))


def _shown(value: object) -> str:
    """A value for an error message: scalars as written (cut short), anything else by its type
    (the repr of a deeply nested list could itself fail)."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "a huge int"
        return text[:64]
    return f"a JSON {type(value).__name__}"


def _object(value: object, field: str, reason: str) -> Mapping[str, object]:
    """A JSON object (null: an empty one)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedError(f"docker {field} is no JSON object", reason=reason)
    return value


def _list(value: object, field: str) -> list[object]:
    """A JSON array (null: an empty one)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedError(f"docker {field} is no JSON array", reason=RECORD)
    return value


def _strings(value: object, field: str) -> tuple[str, ...]:
    items = _list(value, field)
    if not all(isinstance(item, str) for item in items):
        raise MalformedError(f"docker {field} holds other than strings", reason=RECORD)
    return tuple(str(item) for item in items)


def _text(value: object, field: str) -> str:
    """A JSON string (null: an empty one)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedError(f"docker {field} is no string", reason=RECORD)
    return value
