"""Docker Engine as a second container source: its HTTP API on a unix socket, read like containerd.

Containers come from `GET /containers/json?all=1` and `GET /containers/{id}/json`; their device
nodes (HostConfig.Devices, a directory standing for every node under it, all GPU and RDMA
nodes for a privileged container, NVIDIA device requests by index) become the `linux.devices`
of an OCI spec, with each node's number read from the host, so attribution is the same as for
containerd. Events come from `GET /events` filtered to containers; Docker's actions map to
containerd's topics: create, start, oom, die (with its exitCode) and destroy. The bodies are
parsed in dockerjson.py; what it cannot read is skipped (a listing) or told to the watcher (an
event, a container an event names), never an exception other than a SourceError.
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
from collections.abc import Iterator
from pathlib import Path

from lens.containers.node import dockerjson
from lens.containers.node.records import ContainerRecord, RuntimeEvent, TaskRecord
from lens.containers.node.watching import RECORD, TOO_LARGE, MalformedError, Skipped
from lens.runtime import errors, jsontext

log = logging.getLogger(__name__)

API_VERSION = "v1.41"  # Docker 20.10; later engines answer it too
# Device nodes a privileged container is given that Lens attributes: GPUs and RDMA devices.
_PRIVILEGED_DIRS = ("/dev/dri", "/dev/infiniband")
_NVIDIA_MAJOR = 195
_MAX_NVIDIA_INDEX = (1 << 20) - 1  # a minor number has 20 bits
# Docker's events are a few KiB; a longer line is skipped, not held in memory.
MAX_EVENT_BYTES = 1 << 20
# A device directory is walked this deep, through at most this many entries (--device / would
# otherwise walk the host), never into a symbolic link to a directory (it could loop).
_MAX_DEPTH = 8
_MAX_ENTRIES = 4096


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


class DockerEvents:
    """The open /events stream; iterate for events (and skipped messages), `cancel()` from
    another thread to end it."""

    def __init__(self, connection: _UnixConnection, response: http.client.HTTPResponse) -> None:
        self._connection = connection
        self._response = response
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._reading = False

    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]:
        with self._lock:
            if self._cancelled.is_set():
                return  # cancel() closed the connection already
            self._reading = True
        try:
            yield from self._events()
        finally:
            self._connection.close()

    def _events(self) -> Iterator[RuntimeEvent | Skipped]:
        try:
            for line in self._lines():
                if line is None:
                    yield Skipped(reason=TOO_LARGE, detail=f"over {MAX_EVENT_BYTES} bytes")
                    continue
                if not line.strip():
                    continue
                try:
                    event = dockerjson.parse_event_line(line)
                except MalformedError as exc:
                    yield Skipped(reason=exc.reason, detail=str(exc))
                    continue
                if event is not None:
                    yield event
        except (OSError, ValueError, http.client.HTTPException) as exc:
            # ValueError: http.client reading a chunk size from a connection shut down under it
            if not self._cancelled.is_set():
                raise errors.SourceError(f"docker event stream broke: {exc}") from exc
            return
        if not self._cancelled.is_set():
            raise errors.SourceError("docker closed the event stream")

    def _lines(self) -> Iterator[bytes | None]:
        """The stream's lines; None for one over MAX_EVENT_BYTES, whose rest is read and dropped."""
        while line := self._response.readline(MAX_EVENT_BYTES + 1):
            if len(line) <= MAX_EVENT_BYTES:
                yield line
                continue
            while line and not line.endswith(b"\n"):
                line = self._response.readline(MAX_EVENT_BYTES)
            yield None

    def cancel(self) -> None:
        """End the stream, from any thread: the socket is shut down under a reader, which closes
        the connection itself (http.client objects are not shared between threads)."""
        with self._lock:
            self._cancelled.set()
            reading = self._reading
        if not reading:  # nobody will read it (a resync failed first): close it here
            self._connection.close()
            return
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
        self._unreadable: set[str] = set()  # containers whose inspect body was logged unreadable

    def list_containers(self) -> list[ContainerRecord]:
        """Every container but those whose inspect body is unreadable (each logged once)."""
        records: list[ContainerRecord] = []
        for cid, found in self._inspect_all():
            try:
                records.append(self._record(dockerjson.parse_container(found)))
            except MalformedError as exc:
                self._unreadable_body(cid, exc)
        return records

    def get_container(self, container_id: str) -> ContainerRecord | None:
        """The container; None when gone, MalformedError when its inspect body is unreadable."""
        found = self._inspect(container_id)
        return None if found is None else self._record(dockerjson.parse_container(found))

    def list_tasks(self) -> dict[str, TaskRecord]:
        tasks: dict[str, TaskRecord] = {}
        for cid, found in self._inspect_all():
            try:
                tasks[cid] = dockerjson.parse_task(cid, found)
            except MalformedError as exc:
                self._unreadable_body(cid, exc)
        return tasks

    def subscribe(self) -> DockerEvents:
        query = urllib.parse.urlencode({"filters": json.dumps({"type": ["container"]})})
        connection = _UnixConnection(self.address, timeout=None)  # a stream waits for events
        try:
            connection.request("GET", f"/{API_VERSION}/events?{query}")
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise errors.SourceError(f"docker at {self.address}: {exc}") from exc
        if response.status != 200:
            connection.close()
            raise errors.SourceError(f"docker /events answered {response.status}")
        return DockerEvents(connection, response)

    def close(self) -> None:
        """Nothing held between calls: each request opens its own connection."""

    def _inspect_all(self) -> list[tuple[str, object]]:
        """Each listed container's inspect body (those gone meanwhile left out)."""
        ids = self._ids()
        self._unreadable &= set(ids)  # forget those gone
        listed: list[tuple[str, object]] = []
        for cid in ids:
            try:
                body = self._inspect(cid)
            except MalformedError as exc:
                self._unreadable_body(cid, exc)
                continue
            if body is not None:
                listed.append((cid, body))
        return listed

    def _unreadable_body(self, container_id: str, exc: MalformedError) -> None:
        if container_id not in self._unreadable:
            self._unreadable.add(container_id)
            log.warning(
                "docker container unreadable; left out",
                extra={"container": container_id, "reason": str(exc)},
            )

    def _ids(self) -> list[str]:
        listed = self._get("/containers/json?all=1")
        if not isinstance(listed, list):
            raise errors.SourceError("docker /containers/json did not answer a list")
        ids = (c.get("Id") for c in listed if isinstance(c, dict))
        return [cid for cid in ids if isinstance(cid, str) and cid]

    def _inspect(self, container_id: str) -> object:
        """The container's inspect body; None when Docker knows no such container."""
        return self._get(f"/containers/{urllib.parse.quote(container_id)}/json", missing_ok=True)

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
            return jsontext.loads(body)
        except jsontext.JsonError as exc:
            raise MalformedError(f"docker {path} answered no JSON: {exc}", reason=RECORD) from exc

    def _record(self, found: dockerjson.InspectedContainer) -> ContainerRecord:
        return ContainerRecord(
            id=found.id,
            name=found.name,
            labels=found.labels,
            image=found.image,
            spec=json.dumps({"linux": {"devices": self.spec_devices(found.devices)}}).encode(),
            created_at=found.created_at,
        )

    def spec_devices(self, asks: dockerjson.DeviceAsks) -> list[dict[str, object]]:
        """The container's device nodes with their numbers, as an OCI spec lists them."""
        paths = [*(_PRIVILEGED_DIRS if asks.privileged else ()), *asks.paths]
        nodes = [node for path in paths for node in self._nodes(path)]
        nodes.extend(self._nvidia_requests(asks.gpu_requests))
        return nodes

    def _nodes(self, path: str) -> list[dict[str, object]]:
        """The character devices at `path` (every one under it for a directory), on the host:
        under the host root, else where this process sees it (a privileged agent shares /dev)."""
        found: list[dict[str, object]] = []
        pending = [(path, 0)]  # depth first, in name order
        for _ in range(_MAX_ENTRIES):
            if not pending:
                break
            current, depth = pending.pop()
            where, info = self._stat(current)
            if info is None:
                continue
            if stat.S_ISCHR(info.st_mode):
                major, minor = os.major(info.st_rdev), os.minor(info.st_rdev)
                found.append({"path": current, "type": "c", "major": major, "minor": minor})
            elif stat.S_ISDIR(info.st_mode) and self._descends(where, depth):
                names = reversed(_children(where))
                pending.extend((f"{current}/{name}", depth + 1) for name in names)
        return found

    @staticmethod
    def _descends(directory: Path, depth: int) -> bool:
        """Whether a directory found at `depth` is walked: not too deep, and not a symbolic
        link below the path Docker was given (a link to a parent would loop)."""
        return depth < _MAX_DEPTH and (depth == 0 or not directory.is_symlink())

    def _stat(self, path: str) -> tuple[Path, os.stat_result | None]:
        for where in (self._root / path.lstrip("/"), Path(path)):
            try:
                return where, where.stat()
            except (OSError, ValueError):  # ValueError: a NUL in a name read from the host
                continue
        return Path(path), None

    def _nvidia_requests(
        self, requests: tuple[dockerjson.GpuRequest, ...]
    ) -> list[dict[str, object]]:
        """NVIDIA GPUs asked for by `--gpus`: by index, or a count of the host's GPUs."""
        nodes: list[dict[str, object]] = []
        for request in requests:
            indexes = [int(i) for i in request.device_ids if _is_index(i)]
            if not request.device_ids:  # UUIDs are not resolved here (see docs/events.md)
                present = self._nvidia_present()
                indexes = present if request.count < 0 else present[: request.count]
            nodes.extend(
                {"path": f"/dev/nvidia{i}", "type": "c", "major": _NVIDIA_MAJOR, "minor": i}
                for i in indexes
            )
        return nodes

    def _nvidia_present(self) -> list[int]:
        try:
            names = [p.name[6:] for p in (self._root / "dev").glob("nvidia[0-9]*")]
        except OSError:
            return []
        return sorted(int(n) for n in names if _is_index(n))


def _children(directory: Path) -> list[str]:
    """The names in a directory, sorted; none when it cannot be read."""
    try:
        return sorted(child.name for child in directory.iterdir())
    except OSError:
        return []


def _is_index(text: str) -> bool:
    """A GPU index as Docker and the host's /dev/nvidiaN write it: ASCII digits, a minor number."""
    return (
        0 < len(text) <= 7 and text.isascii() and text.isdigit() and int(text) <= _MAX_NVIDIA_INDEX
    )
