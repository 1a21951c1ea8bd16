"""A real containerd for tests and benchmarks: private root, state and socket, a busybox image.

`PrivateContainerd` starts Debian's containerd under a temporary directory and imports a
one-layer OCI image made from the host's static busybox; `run()` starts a container through
`ctr` with CRI labels and device nodes, as the kubelet would through CRI (`cri_style` deletes the
task as soon as it exits, as the CRI plugin does). With `cri=True` the CRI plugin runs too, and
`CriPods` drives pods through it as the kubelet does (host network: no CNI needed). Device nodes
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

import grpc

from lens.proto._generated.cri.runtime.v1 import api_pb2 as cri
from lens.proto._generated.cri.runtime.v1 import api_pb2_grpc as cri_grpc
from lens.sim import daemons

IMAGE = "lens.test/busybox:1"
PAUSE_IMAGE = "lens.test/pause:1"  # a CRI pod's sandbox: busybox sleeping until killed
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


def build_image(
    path: Path,
    *,
    reference: str = IMAGE,
    busybox: str = BUSYBOX,
    command: Sequence[str] = ("/bin/sh",),
) -> Path:
    """Write an OCI image layout archive holding busybox; `ctr images import` reads it."""
    layer = busybox_layer(busybox)
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Cmd": list(command), "Env": ["PATH=/bin"]},
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

    def __init__(self, directory: Path, *, cri: bool = False) -> None:
        for tool in ("containerd", "ctr", "runc"):
            if shutil.which(tool) is None:
                raise ContainerdUnavailable(f"{tool} not found: run scripts/services")
        self.directory = directory
        self.socket = str(directory / "containerd.sock")
        self.cri = cri
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 20.0) -> None:
        config = self.directory / "config.toml"
        config.write_text(
            "version = 2\n"
            f'root = "{self.directory / "root"}"\n'
            f'state = "{self.directory / "state"}"\n'
            + ("" if self.cri else 'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n')
            + f'[grpc]\n  address = "{self.socket}"\n'
            f'[ttrpc]\n  address = "{self.socket}.ttrpc"\n' + self._cri_config()
        )
        self._process = daemons.start(
            ["containerd", "--config", str(config)],
            log=self.directory / "containerd.log",
            ready=lambda: self.ctr("version", check=False).returncode == 0,
            timeout=timeout,
            failure=ContainerdUnavailable,
        )

    def _cri_config(self) -> str:
        """The CRI plugin's table: its pods' sandbox image, and CNI directories of its own (its
        pods use the host's network, so none is configured)."""
        if not self.cri:
            return ""
        cni = self.directory / "cni"
        return (
            '[plugins."io.containerd.grpc.v1.cri"]\n'
            f'  sandbox_image = "{PAUSE_IMAGE}"\n'
            "  disable_apparmor = true\n"
            # No lowering of the sandbox's oom_score_adj: this host may not allow it.
            "  restrict_oom_score_adj = true\n"
            '[plugins."io.containerd.grpc.v1.cri".cni]\n'
            f'  bin_dir = "{cni / "bin"}"\n'
            f'  conf_dir = "{cni / "conf"}"\n'
        )

    def import_image(self) -> str:
        images: list[tuple[Path, str, Sequence[str]]] = [
            (self.directory / "busybox.tar", IMAGE, ("/bin/sh",))
        ]
        if self.cri:
            pause = ("/bin/sleep", "2147483647")
            images.append((self.directory / "pause.tar", PAUSE_IMAGE, pause))
        for path, reference, command in images:
            archive = build_image(path, reference=reference, command=command)
            # The image is named by the index's ref.name annotation. (`--index-name` would name
            # a second image after the index itself, and ctr 1.6 then races to unpack one.)
            imported = self.ctr("images", "import", str(archive), check=False)
            if imported.returncode != 0:
                raise ContainerdUnavailable(f"ctr images import failed: {imported.stderr.strip()}")
        return IMAGE

    def stop(self) -> None:
        if self._process is not None:
            if self.cri:
                pods = CriPods(self)
                try:
                    pods.remove_pods()
                finally:
                    pods.close()
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
        mounts: Sequence[Path] = (),
        memory_limit: int | None = None,
        detach: bool = False,
        remove: bool = True,
        timeout: float = 60.0,
    ) -> subprocess.CompletedProcess[str]:
        """`ctr run`: create and start a container; waits for it (at most `timeout` seconds)
        unless `detach`. Waiting, ctr deletes the task as soon as it exits (as the CRI plugin
        does), and with `remove` the container too. `mounts`: host directories, read-only at
        the same path inside."""
        args = ["run"]
        if remove and not detach:
            args.append("--rm")
        if detach:
            args.append("--detach")
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        for device in devices:
            args += ["--device", str(device)]
        for mount in mounts:
            args += ["--mount", f"type=bind,src={mount},dst={mount},options=rbind:ro"]
        if memory_limit is not None:
            args += ["--memory-limit", str(memory_limit)]
        return self.ctr(*args, IMAGE, name, *command, check=False, timeout=timeout)

    def kill_and_delete(self, name: str) -> None:
        self.ctr("task", "kill", "--signal", "SIGKILL", name, check=False)
        for _ in range(100):
            if self.ctr("task", "delete", name, check=False).returncode == 0:
                break
            time.sleep(0.05)
        self.ctr("containers", "delete", name, check=False)


class CriPods:
    """Pods run through containerd's CRI plugin as the kubelet runs them (`PrivateContainerd`
    with `cri=True`): a sandbox per pod on the host's network, then its containers. The plugin
    deletes a container's task as soon as it exits and keeps its status until it is removed."""

    def __init__(self, ctd: PrivateContainerd, *, timeout: float = 30.0) -> None:
        self._channel = grpc.insecure_channel(f"unix://{ctd.socket}")
        self._runtime = cri_grpc.RuntimeServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout
        self._pods: dict[str, cri.PodSandboxConfig] = {}

    def run_pod(self, *, name: str, namespace: str, uid: str) -> str:
        """Start a pod's sandbox; its id."""
        host_network = cri.NamespaceOption(network=cri.NODE)
        config = cri.PodSandboxConfig(
            metadata=cri.PodSandboxMetadata(name=name, namespace=namespace, uid=uid),
            linux=cri.LinuxPodSandboxConfig(
                security_context=cri.LinuxSandboxSecurityContext(namespace_options=host_network)
            ),
        )
        reply = self._runtime.RunPodSandbox(
            cri.RunPodSandboxRequest(config=config), timeout=self._timeout
        )
        self._pods[reply.pod_sandbox_id] = config
        return str(reply.pod_sandbox_id)

    def start_container(
        self,
        pod: str,
        name: str,
        command: Sequence[str],
        *,
        devices: Sequence[Path] = (),
        mounts: Sequence[Path] = (),
    ) -> str:
        """Create and start a container in the pod, with the labels the kubelet gives; its id.
        `mounts`: host directories, read-only at the same path inside."""
        meta = self._pods[pod].metadata
        labels = pod_labels(pod=meta.name, namespace=meta.namespace, uid=meta.uid, container=name)
        del labels["io.cri-containerd.kind"]  # the plugin's own label, which it adds
        config = cri.ContainerConfig(
            metadata=cri.ContainerMetadata(name=name),
            labels=labels,
            image=cri.ImageSpec(image=IMAGE),
            command=list(command),
            devices=[
                cri.Device(container_path=str(d), host_path=str(d), permissions="rw")
                for d in devices
            ],
            mounts=[
                cri.Mount(container_path=str(m), host_path=str(m), readonly=True) for m in mounts
            ],
        )
        created = self._runtime.CreateContainer(
            cri.CreateContainerRequest(
                pod_sandbox_id=pod, config=config, sandbox_config=self._pods[pod]
            ),
            timeout=self._timeout,
        )
        self._runtime.StartContainer(
            cri.StartContainerRequest(container_id=created.container_id), timeout=self._timeout
        )
        return str(created.container_id)

    def status(self, container_id: str) -> cri.ContainerStatus:
        request = cri.ContainerStatusRequest(container_id=container_id)
        reply: cri.ContainerStatusResponse = self._runtime.ContainerStatus(
            request, timeout=self._timeout
        )
        return reply.status

    def remove_container(self, container_id: str) -> None:
        request = cri.RemoveContainerRequest(container_id=container_id)
        self._runtime.RemoveContainer(request, timeout=self._timeout)

    def remove_pods(self) -> None:
        """Stop and remove every pod, with its containers: their processes and the sandbox's
        /dev/shm mount would outlive containerd."""
        listed = self._runtime.ListPodSandbox(cri.ListPodSandboxRequest(), timeout=self._timeout)
        for pod in listed.items:
            self._runtime.StopPodSandbox(
                cri.StopPodSandboxRequest(pod_sandbox_id=pod.id), timeout=self._timeout
            )
            self._runtime.RemovePodSandbox(
                cri.RemovePodSandboxRequest(pod_sandbox_id=pod.id), timeout=self._timeout
            )
            self._pods.pop(pod.id, None)

    def close(self) -> None:
        self._channel.close()


def pod_labels(*, pod: str, namespace: str, uid: str, container: str) -> dict[str, str]:
    """The CRI labels the kubelet's containers carry (shared/formats/containerd.md section 3)."""
    return {
        "io.kubernetes.pod.name": pod,
        "io.kubernetes.pod.namespace": namespace,
        "io.kubernetes.pod.uid": uid,
        "io.kubernetes.container.name": container,
        "io.cri-containerd.kind": "container",
    }
