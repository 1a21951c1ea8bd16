"""StorageClasses as storage backends: the kind by provisioner (JuiceFS, Weka, Ceph, NFS), the
Secrets a class references and its descriptive parameters; and a JuiceFS volume's name from its
Secret. Parses what lens/roles/jobs/kubestorage.py lists; scanning.py turns it into rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from lens.runtime import errors
from lens.storage import secrets
from lens.storage.secrets import SecretData, SecretRef

JUICEFS = "juicefs"
WEKA = "weka"
CEPH = "ceph"
NFS = "nfs"
KINDS = (JUICEFS, WEKA, CEPH, NFS)

# Provisioner names as their drivers register them (docs/storage.md has the table).
_EXACT = {
    "csi.juicefs.com": JUICEFS,
    "juicedata.com": JUICEFS,  # the original's second name
    "csi.weka.io": WEKA,
    "rbd.csi.ceph.com": CEPH,
    "cephfs.csi.ceph.com": CEPH,
    "nfs.csi.ceph.com": CEPH,
    "ceph.rook.io/block": CEPH,
    "kubernetes.io/rbd": CEPH,
    "ceph.com/rbd": CEPH,
    "ceph.com/cephfs": CEPH,
    "nfs.csi.k8s.io": NFS,
}
# Rook and OpenShift Data Foundation prefix Ceph-CSI's names with the operator's namespace
# (rook-ceph.rbd.csi.ceph.com); the NFS subdir provisioner's Helm chart names itself
# cluster.local/<release>-nfs-subdir-external-provisioner. Ceph's NFS comes before plain NFS.
_SUFFIXES = (
    (".rbd.csi.ceph.com", CEPH),
    (".cephfs.csi.ceph.com", CEPH),
    (".nfs.csi.ceph.com", CEPH),
    ("nfs-subdir-external-provisioner", NFS),
    ("nfs-client-provisioner", NFS),
)

# Parameters that describe where the data lives. Others are left out: parameters are free-form
# and some drivers accept credentials in them, which must never reach the table.
DESCRIPTIVE_PARAMETERS = frozenset(
    {
        "server",
        "share",
        "subDir",
        "path",
        "pathPattern",
        "clusterID",
        "clusterNamespace",
        "pool",
        "blockPool",
        "dataPool",
        "fsName",
        "monitors",
        "filesystemName",
        "filesystemGroupName",
        "volumeType",
    }
)

_CSI_PREFIX = "csi.storage.k8s.io/"
_CSI_ROLES = (
    "provisioner",
    "controller-publish",
    "node-stage",
    "node-publish",
    "controller-expand",
    "node-expand",
)
# The in-tree Ceph RBD provisioner's own parameter names.
_RBD_ROLES = {
    "admin": ("adminSecretName", "adminSecretNamespace"),
    "user": ("userSecretName", "userSecretNamespace"),
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StorageBackend:
    """One StorageClass of a kind Lens knows."""

    kind: str
    storage_class: str
    provisioner: str
    parameters: tuple[tuple[str, str], ...]  # the descriptive ones, sorted
    secrets: tuple[tuple[str, SecretRef], ...]  # (role, Secret), sorted by role

    @property
    def meta_secret(self) -> SecretRef | None:
        """JuiceFS: the Secret whose `name` is the volume's name (the provisioner's, as the
        original read it, else the one mounts use)."""
        if self.kind != JUICEFS:
            return None
        by_role = dict(self.secrets)
        return by_role.get("provisioner") or by_role.get("node-publish")


def kind_of(provisioner: str) -> str | None:
    """The storage kind a provisioner provisions; None for kinds Lens does not scan."""
    kind = _EXACT.get(provisioner)
    if kind is not None:
        return kind
    for suffix, suffixed in _SUFFIXES:
        if provisioner.endswith(suffix):
            return suffixed
    return None


def parse_storage_classes(document: object) -> list[StorageBackend]:
    """The backends among a StorageClassList's items; SourceError when it is malformed."""
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise errors.SourceError("the StorageClass list has no items")
    found = []
    for index, item in enumerate(document["items"]):
        backend = _backend(item, f"StorageClass item {index}")
        if backend is not None:
            found.append(backend)
    return sorted(found, key=lambda b: b.storage_class)


def _backend(item: object, where: str) -> StorageBackend | None:
    if not isinstance(item, dict):
        raise errors.SourceError(f"{where} is no object")
    metadata = item.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    provisioner = item.get("provisioner")
    parameters = item.get("parameters") or {}
    if not isinstance(name, str) or not name or not isinstance(provisioner, str):
        raise errors.SourceError(f"{where} has no metadata.name or provisioner")
    if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
        raise errors.SourceError(f"StorageClass {name}: parameters are not text")
    kind = kind_of(provisioner)
    if kind is None:
        return None
    return StorageBackend(
        kind=kind,
        storage_class=name,
        provisioner=provisioner,
        parameters=tuple(
            sorted((k, v) for k, v in parameters.items() if k in DESCRIPTIVE_PARAMETERS)
        ),
        secrets=_secret_refs(parameters),
    )


def _secret_refs(parameters: Mapping[str, str]) -> tuple[tuple[str, SecretRef], ...]:
    """The Secrets the class names, by role; a role whose Secret has no name is left out."""
    keys = {
        role: (f"{_CSI_PREFIX}{role}-secret-name", f"{_CSI_PREFIX}{role}-secret-namespace")
        for role in _CSI_ROLES
    }
    keys.update(_RBD_ROLES)
    refs = []
    for role, (name_key, namespace_key) in keys.items():
        name = parameters.get(name_key, "")
        if name:
            refs.append((role, SecretRef(namespace=parameters.get(namespace_key, ""), name=name)))
    return tuple(sorted(refs))


def juicefs_volume_name(secret: SecretData, ref: SecretRef) -> str:
    """The JuiceFS volume a Secret is the credentials of: its `name` key, the `vol_name` label
    of the volume's metrics. Nothing else of the Secret is read."""
    value = secret.data.get("name")
    if value is None:
        raise errors.SourceError(f"secret {ref} has no key name")
    name = secrets.decode_text(value, what=f"secret {ref} key name").strip()
    if not name or len(name) > 253 or not name.isprintable():
        raise errors.SourceError(f"secret {ref} key name is no volume name")
    return name
