"""Ephemeral storage from /stats/summary: pods' use and the node's root and image file systems."""

from __future__ import annotations

import pytest

from lens.kube.kubelet import ephemeral
from lens.kube.kubelet.client import KubeletClient
from lens.runtime import errors, families

from ..conftest import Kubelet

FS = {"usedBytes": 740, "availableBytes": 3100, "capacityBytes": 3840, "inodes": 9}
SUMMARY = {
    "node": {"nodeName": "gpu-node-07", "fs": FS, "runtime": {"imageFs": {"usedBytes": 210}}},
    "pods": [
        {
            "podRef": {"name": "llama-0", "namespace": "ml", "uid": "u"},
            "ephemeral-storage": {"usedBytes": 10790000000},
        },
        {"podRef": {"name": "new-0", "namespace": "ml", "uid": "v"}},
    ],
}


def test_a_summary() -> None:
    storage = ephemeral.parse_summary(SUMMARY)
    assert storage.node == "gpu-node-07"
    root = storage.root()
    assert root is not None
    assert (root.used_bytes, root.available_bytes, root.capacity_bytes) == (740, 3100, 3840)
    assert root.used_ratio == pytest.approx(740 / 3840)
    image = storage.filesystems[1]
    assert image.fs == "image" and image.usage.used_bytes == 210
    assert image.usage.capacity_bytes is None and image.usage.used_ratio is None
    (pod,) = storage.pods
    assert (pod.namespace, pod.name, pod.used_bytes) == ("ml", "llama-0", 10790000000)


def test_not_a_summary() -> None:
    with pytest.raises(errors.SourceError, match="not a Summary"):
        ephemeral.parse_summary({"kind": "Status"})
    with pytest.raises(errors.SourceError, match="not a Summary"):
        ephemeral.parse_summary({"node": {"nodeName": "n"}, "pods": "x"})


def test_families_are_valid_and_unique() -> None:
    families.check_groups(
        [
            ephemeral.NODE_FS_FAMILIES,
            ephemeral.POD_FAMILIES,
            ephemeral.COMPAT_NODE_FAMILIES,
            ephemeral.COMPAT_POD_FAMILIES,
        ]
    )


def test_through_the_simulated_kubelet(kubelet: Kubelet) -> None:
    kubelet.add_pod("train-0", {"containers": [{"name": "a"}]})
    storage = ephemeral.parse_summary(KubeletClient(kubelet.config).get_json("/stats/summary"))
    assert storage.node == "gpu-node-1"
    assert [p.name for p in storage.pods] == ["train-0"]
    root = storage.root()
    assert root is not None and root.capacity_bytes and root.used_ratio is not None
