from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from lens.proto._generated.cri.runtime.v1 import api_pb2 as cri
from lens.sim import containerd as harness

pytestmark = pytest.mark.slow_timeout


def test_the_image_is_an_oci_layout_with_busybox_and_its_applets(tmp_path: Path) -> None:
    fake_busybox = tmp_path / "busybox"
    fake_busybox.write_bytes(b"\x7fELF-not-really")
    archive = harness.build_image(tmp_path / "img.tar", busybox=str(fake_busybox))
    with tarfile.open(archive) as image:
        index = json.loads(image.extractfile("index.json").read())  # type: ignore[union-attr]
        (manifest_ref,) = index["manifests"]
        assert manifest_ref["annotations"]["org.opencontainers.image.ref.name"] == harness.IMAGE
        names = image.getnames()
        assert "oci-layout" in names and len([n for n in names if n.startswith("blobs/")]) == 3


def test_pod_labels_are_the_cri_labels() -> None:
    labels = harness.pod_labels(pod="p", namespace="ns", uid="u", container="c")
    assert labels["io.kubernetes.container.name"] == "c"
    assert labels["io.cri-containerd.kind"] == "container"


def test_containers_run_on_the_private_containerd(containerd: harness.PrivateContainerd) -> None:
    done = containerd.run("echo-1", ["sh", "-c", "echo hello; exit 7"])
    assert (done.returncode, done.stdout.strip()) == (7, "hello")


def test_cri_pods_run_and_the_plugin_deletes_an_exited_task_but_keeps_its_status(
    cri_containerd: harness.PrivateContainerd, eventually: Callable[..., None]
) -> None:
    pods = harness.CriPods(cri_containerd)
    try:
        pod = pods.run_pod(name="p", namespace="ns", uid="u-1")
        cid = pods.start_container(pod, "main", ["sh", "-c", "exit 3"])
        eventually(lambda: pods.status(cid).state == cri.CONTAINER_EXITED, timeout=10)
        status = pods.status(cid)
        assert (status.exit_code, status.metadata.name) == (3, "main")
        # Both stamped, in whichever order: a process that exits at once may end before CRI
        # stamps its start, once StartContainer returns (issue 16, point 2).
        assert status.finished_at > 0 and status.started_at > 0
        tasks = cri_containerd.ctr("tasks", "ls", "--quiet").stdout.split()
        assert cid not in tasks and pod in tasks  # the pod's sandbox runs on
        labels = json.loads(cri_containerd.ctr("containers", "info", cid).stdout)["Labels"]
        assert labels["io.kubernetes.pod.uid"] == "u-1"
        pods.remove_container(cid)
        pods.remove_pods()
        assert cri_containerd.ctr("containers", "ls", "--quiet").stdout.split() == []
    finally:
        pods.close()
