"""Docker Engine for tests: Debian's dockerd on a private socket, and a scripted stand-in.

`PrivateDocker` starts dockerd with no networking (no bridge, no iptables), the vfs storage
driver and its own managed containerd, loads a one-layer busybox image (docker-save format,
which Docker 20.10 reads) and runs containers through the `docker` CLI with labels, device
nodes and memory limits, as a user or a Docker-based scheduler would. `ScriptedDocker` answers
the three requests Lens makes (container list, inspect, /events) with whatever a test scripts,
including what no dockerd writes: a list where a mapping belongs, a string pid, a far time.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import re
import select
import shutil
import socket
import socketserver
import subprocess
import tarfile
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

from lens.sim import daemons
from lens.sim.containerd import IMAGE, busybox_layer


class DockerUnavailable(RuntimeError):
    """dockerd or the docker CLI is missing (scripts/services installs docker.io)."""


def build_archive(path: Path, *, reference: str = IMAGE) -> Path:
    """A `docker save` archive of the busybox image, for `docker load`."""
    layer = busybox_layer()
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]},
            "rootfs": {
                "type": "layers",
                "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()],
            },
        }
    ).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps(
        [{"Config": config_name, "RepoTags": [reference], "Layers": ["layer0/layer.tar"]}]
    ).encode()
    with tarfile.open(path, mode="w") as archive:
        for name, data in (
            ("manifest.json", manifest),
            (config_name, config),
            ("layer0/layer.tar", layer),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


class PrivateDocker:
    """dockerd under `directory`, until `stop()`."""

    def __init__(self, directory: Path) -> None:
        for tool in ("dockerd", "docker", "containerd", "runc"):
            if shutil.which(tool) is None:
                raise DockerUnavailable(f"{tool} not found: run scripts/services")
        self.directory = directory
        self.socket = str(directory / "docker.sock")
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        command = [
            "dockerd",
            "--data-root",
            str(self.directory / "data"),
            "--exec-root",
            str(self.directory / "exec"),
            "--pidfile",
            str(self.directory / "docker.pid"),
            "--host",
            f"unix://{self.socket}",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-masq=false",
            "--storage-driver=vfs",
        ]
        self._process = daemons.start(
            command,
            log=self.directory / "dockerd.log",
            ready=lambda: self.docker("version", check=False).returncode == 0,
            timeout=timeout,
            failure=DockerUnavailable,
        )

    def load_image(self) -> str:
        archive = build_archive(self.directory / "busybox-docker.tar")
        loaded = self.docker("load", "--input", str(archive), check=False)
        if loaded.returncode != 0:
            raise DockerUnavailable(f"docker load failed: {loaded.stderr.strip()}")
        return IMAGE

    def stop(self) -> None:
        if self._process is None:
            return
        self.docker("rm", "--force", *self.container_ids(), check=False)
        daemons.stop(self._process, timeout=20)
        self._process = None

    def docker(
        self, *args: str, check: bool = True, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", *args],
            env={**os.environ, "DOCKER_HOST": f"unix://{self.socket}"},
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    def container_ids(self) -> list[str]:
        listed = self.docker("ps", "--all", "--quiet", "--no-trunc", check=False)
        return listed.stdout.split()

    def run(
        self,
        name: str,
        command: Sequence[str],
        *,
        labels: Mapping[str, str] = {},  # read only
        devices: Sequence[Path] = (),
        memory_limit: int | None = None,
        detach: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """`docker run` without networking; waits for the container unless `detach`."""
        args = ["run", "--name", name, "--network", "none"]
        if detach:
            args.append("--detach")
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        for device in devices:
            args += ["--device", str(device)]
        if memory_limit is not None:
            args += ["--memory", str(memory_limit)]
        return self.docker(*args, IMAGE, *command, check=False)

    def remove(self, name: str) -> None:
        self.docker("rm", "--force", name, check=False)


def inspect_body(
    container_id: str,
    *,
    name: str = "",
    labels: Mapping[str, str] = {},  # read only
    devices: Sequence[str] = (),
    status: str = "running",
    pid: object = 4242,
    created: str = "2026-11-21T03:03:04.799359262Z",
) -> dict[str, Any]:
    """A `GET /containers/{id}/json` body as Docker 20.10 writes it (the fields Lens reads)."""
    return {
        "Id": container_id,
        "Name": f"/{name or container_id[:12]}",
        "Created": created,
        "State": {
            "Status": status,
            "Pid": pid,
            "ExitCode": 0,
            "FinishedAt": "0001-01-01T00:00:00Z",
        },
        "Config": {"Image": "busybox", "Labels": dict(labels)},
        "HostConfig": {
            "Privileged": False,
            "Devices": [
                {"PathOnHost": d, "PathInContainer": d, "CgroupPermissions": "rwm"} for d in devices
            ],
            "DeviceRequests": None,
        },
    }


def event_line(action: str, container_id: str, *, time_nano: int, **attributes: str) -> bytes:
    """One line of the /events stream for a container, as Docker 20.10 writes it."""
    seconds = time_nano // 1_000_000_000
    message = {
        "status": action,
        "id": container_id,
        "Type": "container",
        "Action": action,
        "Actor": {"ID": container_id, "Attributes": {"image": "busybox", **attributes}},
        "scope": "local",
        "time": seconds,
        "timeNano": time_nano,
    }
    return json.dumps(message).encode() + b"\n"


_ROUTES = re.compile(r"/v[0-9.]+/(?:(containers/json)|containers/([^/]+)/json|(events))")


class ScriptedDocker:
    """The Engine API on `socket_path`, answering from `bodies` (container id → inspect body,
    JSON or raw bytes) and `listing` (the /containers/json answer; by default every id in
    `bodies`); `send()` writes a line to every open /events stream, until `stop()`."""

    def __init__(self, socket_path: Path) -> None:
        self.socket = str(socket_path)
        self.bodies: dict[str, object] = {}
        self.listing: object | None = None
        self._streams: list[queue.Queue[bytes | None]] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"docker": self})
        self._server = _UnixServer(self.socket, handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.close_streams()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    @property
    def subscribers(self) -> int:
        """The /events streams open now."""
        with self._lock:
            return len(self._streams)

    def send(self, line: bytes) -> None:
        """Write `line` (its newline included) to every open /events stream."""
        with self._lock:
            for stream in self._streams:
                stream.put(line)

    def close_streams(self) -> None:
        """End every open /events stream, as a restarting dockerd would."""
        with self._lock:
            for stream in self._streams:
                stream.put(None)

    def _listing(self) -> object:
        if self.listing is not None:
            return self.listing
        return [{"Id": cid} for cid in self.bodies]

    def _open(self) -> queue.Queue[bytes | None]:
        stream: queue.Queue[bytes | None] = queue.Queue()
        with self._lock:
            self._streams.append(stream)
        return stream

    def _close(self, stream: queue.Queue[bytes | None]) -> None:
        with self._lock:
            self._streams.remove(stream)


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client gone mid-stream (Lens cancelling /events) is no error


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    docker: ClassVar[ScriptedDocker]

    def log_message(self, format: str, *args: Any) -> None:
        return  # a unix socket's peer has no address to log

    def do_GET(self) -> None:
        route = _ROUTES.fullmatch(urllib.parse.urlsplit(self.path).path)
        if route is None:
            self._answer(404, {"message": "page not found"})
        elif route[1]:
            self._answer(200, self.docker._listing())
        elif route[2]:
            cid = urllib.parse.unquote(route[2])
            found = self.docker.bodies.get(cid)
            if found is None:
                self._answer(404, {"message": f"No such container: {cid}"})
            else:
                self._answer(200, found)
        else:
            self._events()

    def _answer(self, status: int, body: object) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self) -> None:
        """Chunked, one chunk per line as dockerd flushes them, until the stream is ended."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        stream = self.docker._open()
        try:
            while (line := self._next(stream)) is not None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        finally:
            self.docker._close(stream)
            self.close_connection = True

    def _next(self, stream: queue.Queue[bytes | None]) -> bytes | None:
        """The next line to send; None once the stream is ended or the client hung up."""
        while True:
            try:
                return stream.get(timeout=0.1)
            except queue.Empty:
                if self._hung_up():
                    return None

    def _hung_up(self) -> bool:
        # poll, not select: a process with a thousand files open (a replayed cluster's agents)
        # has descriptors past select()'s limit of 1024.
        watching = select.poll()
        watching.register(self.connection, select.POLLIN)
        if not watching.poll(0):
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return peeked == b""
