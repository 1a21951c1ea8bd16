"""The private dockerd harness: an image built from busybox, containers with labels and devices."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from lens.sim.containerd import IMAGE
from lens.sim.docker import PrivateDocker, build_archive

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
