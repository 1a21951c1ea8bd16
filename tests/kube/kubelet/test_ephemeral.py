"""Ephemeral storage from /stats/summary: pods' use and the node's root and image file systems."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.kube.kubelet import ephemeral
from lens.kube.kubelet.client import KubeletClient
from lens.runtime import errors, families
from lens.runtime.textformat import TextRenderer

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


def test_byte_counts_outside_64_bits_are_unknown() -> None:
    # 10^400 was kept, and rendering it raised OverflowError (no float holds it).
    summary = {
        "node": {"nodeName": "n", "fs": {"usedBytes": 10**400, "capacityBytes": -1}},
        "pods": [{"podRef": {"name": "p"}, "ephemeral-storage": {"usedBytes": 2**64}}],
    }
    storage = ephemeral.parse_summary(summary)
    root = storage.root()
    assert root is not None and root.used_bytes is None and root.capacity_bytes is None
    assert storage.pods == ()


def test_names_become_label_safe_text() -> None:
    summary = {
        "node": {"nodeName": "gpu\ud800", "fs": FS},
        "pods": [{"podRef": {"name": ["x"], "namespace": "ml\0"}, "ephemeral-storage": FS}],
    }
    storage = ephemeral.parse_summary(summary)
    assert storage.node == "gpu?"
    assert [(p.namespace, p.name) for p in storage.pods] == [("ml", "")]


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(st.characters(exclude_categories=()), max_size=6),
        st.sampled_from([10**400, 2**64, -1]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
FILESYSTEMS = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {}, optional={k: JSON for k in ("usedBytes", "availableBytes", "capacityBytes")}
    ),
)
SUMMARIES = st.fixed_dictionaries(
    {
        "node": st.fixed_dictionaries(
            {"nodeName": JSON, "fs": FILESYSTEMS},
            optional={"runtime": st.fixed_dictionaries({"imageFs": FILESYSTEMS})},
        )
    },
    optional={
        "pods": st.lists(
            st.fixed_dictionaries(
                {
                    "podRef": st.one_of(
                        JSON, st.fixed_dictionaries({"name": JSON, "namespace": JSON})
                    )
                },
                optional={"ephemeral-storage": FILESYSTEMS},
            ),
            max_size=3,
        )
    },
)


@given(st.one_of(JSON, SUMMARIES))
def test_any_summary_is_storage_or_a_source_error(document: object) -> None:
    try:
        storage = ephemeral.parse_summary(document)
    except errors.SourceError:
        return
    root = storage.root()
    nodes = [] if root is None else [ephemeral.NodeStorage(node=storage.node, usage=root)]
    pods = [ephemeral.CompatPodStorage(node=storage.node, pod=pod) for pod in storage.pods]
    TextRenderer().render_groups(
        [
            (ephemeral.NODE_FS_FAMILIES, storage.filesystems),
            (ephemeral.POD_FAMILIES, storage.pods),
            (ephemeral.COMPAT_NODE_FAMILIES, nodes),
            (ephemeral.COMPAT_POD_FAMILIES, pods),
        ],
        opt_in=frozenset(),
    ).encode()
