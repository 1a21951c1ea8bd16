"""StorageClasses as storage backends: kinds by provisioner, the Secrets they reference, the
parameters kept, and a JuiceFS volume's name from its Secret."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.storage import classes, secrets
from lens.storage.secrets import SecretData, SecretRef


def storage_class(name: str, provisioner: str, **parameters: str) -> dict[str, object]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "parameters": parameters,
    }


@pytest.mark.parametrize(
    ("provisioner", "kind"),
    [
        ("csi.juicefs.com", "juicefs"),
        ("juicedata.com", "juicefs"),
        ("csi.weka.io", "weka"),
        ("rbd.csi.ceph.com", "ceph"),
        ("rook-ceph.rbd.csi.ceph.com", "ceph"),
        ("openshift-storage.cephfs.csi.ceph.com", "ceph"),
        ("rook-ceph.nfs.csi.ceph.com", "ceph"),
        ("ceph.rook.io/block", "ceph"),
        ("kubernetes.io/rbd", "ceph"),
        ("nfs.csi.k8s.io", "nfs"),
        ("k8s-sigs.io/nfs-subdir-external-provisioner", "nfs"),
        ("cluster.local/team-nfs-subdir-external-provisioner", "nfs"),
        ("cluster.local/nfs-client-provisioner", "nfs"),
        ("ebs.csi.aws.com", None),
        ("rancher.io/local-path", None),
        ("", None),
    ],
)
def test_the_kind_comes_from_the_provisioner(provisioner: str, kind: str | None) -> None:
    assert classes.kind_of(provisioner) == kind


def test_a_list_gives_the_backends_with_references_and_descriptive_parameters() -> None:
    listing = {
        "items": [
            storage_class(
                "jfs",
                "csi.juicefs.com",
                **{
                    "csi.storage.k8s.io/provisioner-secret-name": "jfs-secret",
                    "csi.storage.k8s.io/provisioner-secret-namespace": "kube-system",
                    "csi.storage.k8s.io/node-publish-secret-name": "jfs-secret",
                    "csi.storage.k8s.io/node-publish-secret-namespace": "kube-system",
                    "juicefs/mount-image": "juicedata/mount:ce",
                },
            ),
            storage_class("gp3", "ebs.csi.aws.com", type="gp3"),
            storage_class(
                "nfs", "nfs.csi.k8s.io", server="10.0.0.5", share="/export", password="hunter2"
            ),
            storage_class(
                "rbd",
                "kubernetes.io/rbd",
                monitors="10.0.0.1:6789",
                pool="kube",
                adminSecretName="ceph-admin",
                adminSecretNamespace="kube-system",
                userSecretName="ceph-user",
            ),
        ]
    }
    jfs, nfs, rbd = classes.parse_storage_classes(listing)
    assert (jfs.kind, jfs.storage_class, jfs.provisioner) == ("juicefs", "jfs", "csi.juicefs.com")
    ref = SecretRef(namespace="kube-system", name="jfs-secret")
    assert jfs.secrets == (("node-publish", ref), ("provisioner", ref))
    assert jfs.meta_secret == ref and jfs.parameters == ()
    # A parameter Lens does not know to be descriptive is left out, credentials or not.
    assert nfs.parameters == (("server", "10.0.0.5"), ("share", "/export"))
    assert nfs.meta_secret is None
    assert rbd.secrets == (
        ("admin", SecretRef(namespace="kube-system", name="ceph-admin")),
        ("user", SecretRef(namespace="", name="ceph-user")),
    )
    assert dict(rbd.parameters) == {"monitors": "10.0.0.1:6789", "pool": "kube"}


def test_a_juicefs_class_without_a_provisioner_secret_uses_the_mounts_one() -> None:
    listing = {
        "items": [
            storage_class(
                "jfs",
                "csi.juicefs.com",
                **{
                    "csi.storage.k8s.io/node-publish-secret-name": "mount",
                    "csi.storage.k8s.io/node-publish-secret-namespace": "jfs",
                },
            )
        ]
    }
    (jfs,) = classes.parse_storage_classes(listing)
    assert jfs.meta_secret == SecretRef(namespace="jfs", name="mount")


def test_a_malformed_list_is_a_source_error() -> None:
    with pytest.raises(errors.SourceError, match="no items"):
        classes.parse_storage_classes({"kind": "Status"})
    with pytest.raises(errors.SourceError, match=r"item 0 has no metadata\.name"):
        classes.parse_storage_classes({"items": [{"provisioner": "csi.weka.io"}]})
    with pytest.raises(errors.SourceError, match="StorageClass w: parameters are not text"):
        classes.parse_storage_classes(
            {"items": [{**storage_class("w", "csi.weka.io"), "parameters": {"a": 1}}]}
        )


def test_the_volume_name_is_the_secrets_name_key_and_nothing_else() -> None:
    ref = SecretRef(namespace="kube-system", name="jfs")
    secret = SecretData(
        data={
            "name": secrets.encode_text("datasets\n"),
            "metaurl": secrets.encode_text("redis://:password@redis:6379/1"),
        }
    )
    assert classes.juicefs_volume_name(secret, ref) == "datasets"
    with pytest.raises(errors.SourceError, match="secret kube-system/jfs has no key name"):
        classes.juicefs_volume_name(SecretData(data={}), ref)
    with pytest.raises(errors.SourceError, match="key name is no volume name"):
        classes.juicefs_volume_name(SecretData(data={"name": secrets.encode_text(" ")}), ref)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
ITEMS = st.builds(
    lambda name, provisioner, parameters: {
        "metadata": {"name": name},
        "provisioner": provisioner,
        "parameters": parameters,
    },
    st.text(max_size=6) | JSON,
    st.sampled_from(["csi.juicefs.com", "csi.weka.io", "nfs.csi.k8s.io"]) | JSON,
    st.dictionaries(
        st.sampled_from(
            ["pool", "csi.storage.k8s.io/provisioner-secret-name", "adminSecretName", "x"]
        ),
        st.text(max_size=6) | JSON,
        max_size=3,
    )
    | JSON,
)


@given(document=JSON | st.fixed_dictionaries({"items": st.lists(ITEMS | JSON, max_size=3)}))
def test_any_list_is_backends_or_a_source_error(document: object) -> None:
    try:
        found = classes.parse_storage_classes(document)
    except errors.SourceError:
        return
    assert all(b.kind in classes.KINDS for b in found)


@given(data=st.dictionaries(st.sampled_from(["name", "metaurl"]), st.text(max_size=12)))
def test_any_secret_names_a_volume_or_is_a_source_error(data: dict[str, str]) -> None:
    with contextlib.suppress(errors.SourceError):
        classes.juicefs_volume_name(SecretData(data=data), SecretRef(namespace="a", name="b"))
