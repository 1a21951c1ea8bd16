"""A real Docker Engine for tests: Debian's dockerd on a private socket, data root and exec root.

`PrivateDocker` starts dockerd with no networking (no bridge, no iptables), the vfs storage
driver and its own managed containerd, loads a one-layer busybox image (docker-save format,
which Docker 20.10 reads) and runs containers through the `docker` CLI with labels, device
nodes and memory limits, as a user or a Docker-based scheduler would.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

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
