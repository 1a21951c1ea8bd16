"""The private dockerd harness (an image built from busybox, containers with labels and devices)
and the scripted Engine API."""

from __future__ import annotations

import http.client
import json
import os
import socket
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lens.sim.containerd import IMAGE
from lens.sim.docker import PrivateDocker, ScriptedDocker, build_archive, event_line, inspect_body

pytestmark = pytest.mark.slow_timeout


def test_the_archive_is_in_docker_save_format(tmp_path: Path) -> None:
    with tarfile.open(build_archive(tmp_path / "image.tar")) as archive:
        (entry,) = json.loads(archive.extractfile("manifest.json").read())  # type: ignore[union-attr]
        assert entry["RepoTags"] == [IMAGE]
        config = json.loads(archive.extractfile(entry["Config"]).read())  # type: ignore[union-attr]
        assert config["rootfs"]["type"] == "layers" and len(entry["Layers"]) == 1


def test_containers_run_with_labels_devices_and_exit_codes(
    docker: PrivateDocker, device_nodes: dict[str, Path]
) -> None:
    done = docker.run("h-exit", ["sh", "-c", "exit 7"], labels={"team": "a"})
    assert done.returncode == 7, done.stderr
    running = docker.run("h-dev", ["sleep", "60"], devices=[device_nodes["render"]], detach=True)
    assert running.returncode == 0, running.stderr
    try:
        inspected = json.loads(docker.docker("inspect", "h-exit", "h-dev").stdout)
        labels, devices = inspected[0]["Config"]["Labels"], inspected[1]["HostConfig"]["Devices"]
        assert labels == {"team": "a"}
        assert devices[0]["PathOnHost"] == str(device_nodes["render"])
        assert len(docker.container_ids()) >= 2
    finally:
        docker.remove("h-exit")
        docker.remove("h-dev")
    assert not {"h-exit", "h-dev"} & set(
        docker.docker("ps", "-a", "--format", "{{.Names}}").stdout.split()
    )


class _Unix(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=5)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def _get(engine: ScriptedDocker, path: str) -> tuple[int, bytes]:
    connection = _Unix(engine.socket)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_scripted_engine_answers_what_the_test_sets(
    tmp_path_factory: pytest.TempPathFactory, eventually: Callable[..., None]
) -> None:
    engine = ScriptedDocker(tmp_path_factory.mktemp("sd") / "docker.sock")
    engine.bodies["c1"] = inspect_body("c1", name="one", pid="4242")
    engine.bodies["raw"] = b"{nope"
    engine.start()
    try:
        status, listed = _get(engine, "/v1.41/containers/json?all=1")
        assert (status, json.loads(listed)) == (200, [{"Id": "c1"}, {"Id": "raw"}])
        status, body = _get(engine, "/v1.41/containers/c1/json")
        inspected = json.loads(body)
        assert (inspected["Name"], inspected["State"]["Pid"]) == ("/one", "4242")
        assert _get(engine, "/v1.41/containers/raw/json") == (200, b"{nope")
        assert _get(engine, "/v1.41/containers/gone/json")[0] == 404
        engine.listing = {"not": "a list"}
        assert json.loads(_get(engine, "/v1.41/containers/json")[1]) == {"not": "a list"}

        stream = _Unix(engine.socket)
        stream.request("GET", "/v1.41/events")
        response = stream.getresponse()
        eventually(lambda: engine.subscribers == 1)
        engine.send(event_line("start", "c1", time_nano=1795230203_454553106))
        message = json.loads(response.readline())
        assert (message["Action"], message["Actor"]["ID"], message["time"]) == (
            "start",
            "c1",
            1795230203,
        )
        engine.close_streams()
        assert response.read() == b""  # the chunked body ended
        stream.close()
        eventually(lambda: engine.subscribers == 0)

        hung_up = _Unix(engine.socket)
        hung_up.request("GET", "/v1.41/events")
        hung_up.getresponse()
        eventually(lambda: engine.subscribers == 1)
        hung_up.close()
        eventually(lambda: engine.subscribers == 0)
    finally:
        engine.stop()


def test_an_event_stream_stays_open_in_a_process_with_many_files_open(
    tmp_path_factory: pytest.TempPathFactory, eventually: Callable[..., None]
) -> None:
    """A process hosting many agents has descriptors past select()'s 1024: the engine's check
    for a client gone must not end a stream whose connection got one of those."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    engine = ScriptedDocker(tmp_path_factory.mktemp("sd") / "docker.sock")
    engine.start()
    stream = _Unix(engine.socket)
    try:
        stream.request("GET", "/v1.41/events")
        response = stream.getresponse()
        eventually(lambda: engine.subscribers == 1)
        time.sleep(0.3)  # a few of the engine's checks for a client gone
        engine.send(event_line("die", "c1", time_nano=1795230203_454553106))
        assert json.loads(response.readline())["Action"] == "die"
        assert engine.subscribers == 1
        stream.close()
        eventually(lambda: engine.subscribers == 0)
    finally:
        stream.close()
        engine.stop()
        for fd in held:
            os.close(fd)
