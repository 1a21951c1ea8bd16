"""Docker Engine as a second container source: its HTTP API on a unix socket, read like containerd.

Containers come from `GET /containers/json?all=1` and `GET /containers/{id}/json`; their device
nodes (HostConfig.Devices, a directory standing for every node under it, all GPU and RDMA
nodes for a privileged container, NVIDIA device requests by index) become the `linux.devices`
of an OCI spec, with each node's number read from the host, so attribution is the same as for
containerd. Events come from `GET /events` filtered to containers; Docker's actions map to
containerd's topics: create, start, oom, die (with its exitCode) and destroy.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import socket
import stat
import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lens.containers.node.records import ContainerRecord, RuntimeEvent, TaskRecord
from lens.runtime import errors
from lens.runtime.timestamps import parse_rfc3339

log = logging.getLogger(__name__)

API_VERSION = "v1.41"  # Docker 20.10; later engines answer it too
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
# Device nodes a privileged container is given that Lens attributes: GPUs and RDMA devices.
_PRIVILEGED_DIRS = ("/dev/dri", "/dev/infiniband")
_NVIDIA_MAJOR = 195


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def parse_time(text: object) -> float | None:
    """Docker's RFC 3339 times as epoch seconds; None for the zero time (unset)."""
    if not isinstance(text, str) or not text or text.startswith("0001-01-01"):
        return None
    moment = parse_rfc3339(text)
    if moment is None:
        raise errors.SourceError(f"docker time {text!r} unreadable")
    return moment.timestamp()


def parse_event(message: Mapping[str, Any]) -> RuntimeEvent | None:
    """The tracker's event for one /events message; None for actions it does not act on."""
    if message.get("Type") != "container":
        return None
    topic = _ACTIONS.get(str(message.get("Action", "")))
    actor = message.get("Actor") or {}
    container_id = str(actor.get("ID") or message.get("id") or "")
    if topic is None or not container_id:
        return None
    nanos = message.get("timeNano")
    time = int(nanos) / 1e9 if nanos else float(message.get("time") or 0)
    if topic != "/tasks/exit":
        return RuntimeEvent(topic=topic, container_id=container_id, time=time)
    code = str((actor.get("Attributes") or {}).get("exitCode", ""))
    return RuntimeEvent(
        topic=topic,
        container_id=container_id,
        time=time,
        exit_status=int(code) if code.lstrip("-").isdigit() else None,
        exited_at=time,
    )


class DockerEvents:
    """The open /events stream; iterate for events, `cancel()` from another thread to end it."""

    def __init__(self, connection: _UnixConnection, response: http.client.HTTPResponse) -> None:
        self._connection = connection
        self._response = response
        self._cancelled = threading.Event()

    def __iter__(self) -> Iterator[RuntimeEvent]:
        try:
            yield from self._events()
        finally:
            self._connection.close()

    def _events(self) -> Iterator[RuntimeEvent]:
        try:
            for line in self._response:
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError as exc:
                    raise errors.SourceError(f"docker event is not JSON: {exc}") from exc
                event = parse_event(message) if isinstance(message, dict) else None
                if event is not None:
                    yield event
        except (OSError, ValueError, http.client.HTTPException) as exc:
            # ValueError: http.client reading a chunk size from a connection shut down under it
            if not self._cancelled.is_set():
                raise errors.SourceError(f"docker event stream broke: {exc}") from exc
            return
        if not self._cancelled.is_set():
            raise errors.SourceError("docker closed the event stream")

    def cancel(self) -> None:
        """End the stream from another thread: the socket is shut down under the reader, which
        closes the connection itself (http.client objects are not shared between threads)."""
        self._cancelled.set()
        sock = self._connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class DockerClient:
    """Docker Engine's containers and events, for the tracker and watcher."""

    def __init__(self, address: str, *, host_root: str, timeout_seconds: float) -> None:
        self.address = address.removeprefix("unix://")
        self._root = Path(host_root)
        self._timeout = timeout_seconds

    def list_containers(self) -> list[ContainerRecord]:
        records = (self.get_container(cid) for cid in self._ids())
        return [r for r in records if r is not None]

    def get_container(self, container_id: str) -> ContainerRecord | None:
        found = self._inspect(container_id)
        return None if found is None else self._record(found)

    def list_tasks(self) -> dict[str, TaskRecord]:
        tasks: dict[str, TaskRecord] = {}
        for cid in self._ids():
            found = self._inspect(cid)
            if found is not None:
                tasks[cid] = _task(cid, found.get("State") or {})
        return tasks

    def subscribe(self) -> DockerEvents:
        query = urllib.parse.urlencode({"filters": json.dumps({"type": ["container"]})})
        connection = _UnixConnection(self.address, timeout=None)  # a stream waits for events
        try:
            connection.request("GET", f"/{API_VERSION}/events?{query}")
            response = connection.getresponse()
        except OSError as exc:
            connection.close()
            raise errors.SourceError(f"docker at {self.address}: {exc}") from exc
        if response.status != 200:
            connection.close()
            raise errors.SourceError(f"docker /events answered {response.status}")
        return DockerEvents(connection, response)

    def close(self) -> None:
        """Nothing held between calls: each request opens its own connection."""

    def _ids(self) -> list[str]:
        listed = self._get("/containers/json?all=1")
        if not isinstance(listed, list):
            raise errors.SourceError("docker /containers/json did not answer a list")
        return [str(c["Id"]) for c in listed if isinstance(c, dict) and c.get("Id")]

    def _inspect(self, container_id: str) -> dict[str, Any] | None:
        found = self._get(f"/containers/{urllib.parse.quote(container_id)}/json", missing_ok=True)
        return found if isinstance(found, dict) else None

    def _get(self, path: str, *, missing_ok: bool = False) -> object:
        connection = _UnixConnection(self.address, timeout=self._timeout)
        try:
            connection.request("GET", f"/{API_VERSION}{path}")
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise errors.SourceError(f"docker at {self.address}: {exc}") from exc
        finally:
            connection.close()
        if response.status == 404 and missing_ok:
            return None
        if response.status != 200:
            raise errors.SourceError(f"docker {path} answered {response.status}")
        try:
            return json.loads(body)
        except ValueError as exc:
            raise errors.SourceError(f"docker {path} answered no JSON: {exc}") from exc

    def _record(self, found: Mapping[str, Any]) -> ContainerRecord:
        config = found.get("Config") or {}
        host = found.get("HostConfig") or {}
        return ContainerRecord(
            id=str(found.get("Id", "")),
            name=str(found.get("Name", "")).lstrip("/"),
            labels={str(k): str(v) for k, v in (config.get("Labels") or {}).items()},
            image=str(config.get("Image", "")),
            spec=json.dumps({"linux": {"devices": self.spec_devices(host)}}).encode(),
            created_at=parse_time(found.get("Created")) or 0.0,
        )

    def spec_devices(self, host: Mapping[str, Any]) -> list[dict[str, object]]:
        """The container's device nodes with their numbers, as an OCI spec lists them."""
        paths: list[str] = []
        if host.get("Privileged"):
            paths.extend(_PRIVILEGED_DIRS)
        for mapping in host.get("Devices") or []:
            if isinstance(mapping, dict) and mapping.get("PathOnHost"):
                paths.append(str(mapping["PathOnHost"]))
        nodes = [node for path in paths for node in self._nodes(path)]
        nodes.extend(self._nvidia_requests(host.get("DeviceRequests") or []))
        return nodes

    def _nodes(self, path: str) -> list[dict[str, object]]:
        """The character devices at `path` (every one under it for a directory), on the host:
        under the host root, else where this process sees it (a privileged agent shares /dev)."""
        where = self._root / path.lstrip("/")
        try:
            info = where.stat()
        except OSError:
            where = Path(path)
            try:
                info = where.stat()
            except OSError:
                return []
        if stat.S_ISDIR(info.st_mode):
            return [
                node
                for child in sorted(where.iterdir())
                for node in self._nodes(f"{path}/{child.name}")
            ]
        if not stat.S_ISCHR(info.st_mode):
            return []
        return [
            {
                "path": path,
                "type": "c",
                "major": os.major(info.st_rdev),
                "minor": os.minor(info.st_rdev),
            }
        ]

    def _nvidia_requests(self, requests: list[Any]) -> list[dict[str, object]]:
        """NVIDIA GPUs asked for by `--gpus`: by index, or a count of the host's GPUs."""
        nodes: list[dict[str, object]] = []
        for request in requests:
            if not isinstance(request, dict):
                continue
            capabilities = [c for group in request.get("Capabilities") or [] for c in group or []]
            if request.get("Driver") != "nvidia" and "gpu" not in capabilities:
                continue
            ids = [str(i) for i in request.get("DeviceIDs") or []]
            if not ids:
                present = sorted(
                    int(p.name[6:])
                    for p in (self._root / "dev").glob("nvidia[0-9]*")
                    if p.name[6:].isdigit()
                )
                count = int(request.get("Count") or 0)
                ids = [str(i) for i in (present if count < 0 else present[:count])]
            for index in ids:
                if index.isdigit():  # UUIDs are not resolved here (see docs/events.md)
                    nodes.append(
                        {
                            "path": f"/dev/nvidia{index}",
                            "type": "c",
                            "major": _NVIDIA_MAJOR,
                            "minor": int(index),
                        }
                    )
        return nodes


def _task(container_id: str, state: Mapping[str, Any]) -> TaskRecord:
    status = _TASK_STATUS.get(str(state.get("Status", "")), "unknown")
    exited_at = parse_time(state.get("FinishedAt")) if status == "stopped" else None
    code = state.get("ExitCode")
    return TaskRecord(
        container_id=container_id,
        status=status,
        pid=int(state.get("Pid") or 0),
        exit_status=int(code) if exited_at is not None and isinstance(code, int) else None,
        exited_at=exited_at,
    )
