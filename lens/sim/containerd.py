"""A real containerd for tests and benchmarks: private root, state and socket, a busybox image.

`PrivateContainerd` starts Debian's containerd (CRI plugin off) under a temporary directory and
imports a one-layer OCI image made from the host's static busybox; `run()` starts a container
through `ctr` with CRI labels and device nodes, as the kubelet would through CRI. Device nodes
made with mknod under the test's directory stand in for GPU and RDMA nodes; their numbers match
a lens.sim host tree's sysfs `dev` files.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from lens.sim import daemons

IMAGE = "lens.test/busybox:1"
NAMESPACE = "k8s.io"
BUSYBOX = "/bin/busybox"
APPLETS = ("sh", "sleep", "tail", "cat", "true", "false", "echo")


class ContainerdUnavailable(RuntimeError):
    """containerd, runc or a static busybox is missing (scripts/services installs them)."""


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def busybox_layer(busybox: str = BUSYBOX) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as layer:
        for directory in ("bin", "dev", "proc", "sys", "tmp", "etc"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            layer.addfile(info)
        layer.add(busybox, "bin/busybox")
        for applet in APPLETS:
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type, info.linkname = tarfile.SYMTYPE, "busybox"
            layer.addfile(info)
    return out.getvalue()


def build_image(path: Path, *, reference: str = IMAGE, busybox: str = BUSYBOX) -> Path:
    """Write an OCI image layout archive holding busybox; `ctr images import` reads it."""
    layer = busybox_layer(busybox)
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]},
            "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]},
        }
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _digest(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": _digest(layer),
                    "size": len(layer),
                }
            ],
        }
    ).encode()
    index = json.dumps(
        {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": _digest(manifest),
                    "size": len(manifest),
                    "annotations": {"org.opencontainers.image.ref.name": reference},
                }
            ],
        }
    ).encode()
    with tarfile.open(path, mode="w") as archive:
        _add(archive, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        _add(archive, "index.json", index)
        for blob in (layer, config, manifest):
            _add(archive, f"blobs/sha256/{_digest(blob)[7:]}", blob)
    return path


def make_device_node(path: Path, major: int, minor: int) -> Path:
    """A character device node (needs root), standing in for /dev/dri/renderD128 and the like."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mknod(path, 0o666 | 0o020000, os.makedev(major, minor))
    return path


class PrivateContainerd:
    """containerd on a private socket under `directory`, until `stop()`."""

    def __init__(self, directory: Path) -> None:
        for tool in ("containerd", "ctr", "runc"):
            if shutil.which(tool) is None:
                raise ContainerdUnavailable(f"{tool} not found: run scripts/services")
        self.directory = directory
        self.socket = str(directory / "containerd.sock")
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 20.0) -> None:
        config = self.directory / "config.toml"
        config.write_text(
            "version = 2\n"
            f'root = "{self.directory / "root"}"\n'
            f'state = "{self.directory / "state"}"\n'
            'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
            f'[grpc]\n  address = "{self.socket}"\n'
            f'[ttrpc]\n  address = "{self.socket}.ttrpc"\n'
        )
        self._process = daemons.start(
            ["containerd", "--config", str(config)],
            log=self.directory / "containerd.log",
            ready=lambda: self.ctr("version", check=False).returncode == 0,
            timeout=timeout,
            failure=ContainerdUnavailable,
        )

    def import_image(self) -> str:
        archive = build_image(self.directory / "busybox.tar")
        # The image is named by the index's ref.name annotation. (`--index-name` would name a
        # second image after the index itself, and ctr 1.6 then races to unpack one of the two.)
        imported = self.ctr("images", "import", str(archive), check=False)
        if imported.returncode != 0:
            raise ContainerdUnavailable(f"ctr images import failed: {imported.stderr.strip()}")
        return IMAGE

    def stop(self) -> None:
        if self._process is not None:
            daemons.stop(self._process, timeout=10)
            self._process = None

    def ctr(
        self, *args: str, check: bool = True, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ctr", "--address", self.socket, "--namespace", NAMESPACE, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    def run(
        self,
        name: str,
        command: Sequence[str],
        *,
        labels: Mapping[str, str] = {},  # read only
        devices: Sequence[Path] = (),
        memory_limit: int | None = None,
        detach: bool = False,
        remove: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """`ctr run`: create and start a container; waits for it unless `detach`."""
        args = ["run"]
        if remove and not detach:
            args.append("--rm")
        if detach:
            args.append("--detach")
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        for device in devices:
            args += ["--device", str(device)]
        if memory_limit is not None:
            args += ["--memory-limit", str(memory_limit)]
        return self.ctr(*args, IMAGE, name, *command, check=False)

    def kill_and_delete(self, name: str) -> None:
        self.ctr("task", "kill", "--signal", "SIGKILL", name, check=False)
        for _ in range(100):
            if self.ctr("task", "delete", name, check=False).returncode == 0:
                break
            time.sleep(0.05)
        self.ctr("containers", "delete", name, check=False)


def pod_labels(*, pod: str, namespace: str, uid: str, container: str) -> dict[str, str]:
    """The CRI labels the kubelet's containers carry (shared/formats/containerd.md section 3)."""
    return {
        "io.kubernetes.pod.name": pod,
        "io.kubernetes.pod.namespace": namespace,
        "io.kubernetes.pod.uid": uid,
        "io.kubernetes.container.name": container,
        "io.cri-containerd.kind": "container",
    }
