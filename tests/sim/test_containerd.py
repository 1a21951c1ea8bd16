from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

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
