"""The Kubernetes side of the storage jobs (storagescan.py, multistorage.py): StorageClasses
listed, Secrets read and written through lens/storage/secrets.py's seam, and the clusters of
controller.clusters_secret reached with their kubeconfigs (docs/multi-cluster.md).

API errors become Lens errors here, said as status, reason and the server's message, never the
raw response headers the client's exception carries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Mapping

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, clients, resources
from lens.runtime import errors, names
from lens.storage import secrets
from lens.storage.gathering import ClusterTarget
from lens.storage.secrets import SecretData, SecretRef

log = logging.getLogger(__name__)

SECRETS = resources.Kind(api_version="v1", kind="Secret", plural="secrets", namespaced=True)
STORAGE_CLASSES = resources.Kind(
    api_version="storage.k8s.io/v1", kind="StorageClass", plural="storageclasses", namespaced=False
)
# Of each request: a cluster that does not answer must not hold up the others' gathering long.
TIMEOUT_SECONDS = 10.0
_MANAGED_BY = {"app.kubernetes.io/managed-by": "lens"}
_BY_STATUS: dict[int, type[errors.KubeError]] = {
    401: errors.Forbidden,
    403: errors.Forbidden,
    404: errors.NotFound,
    409: errors.Conflict,
    410: errors.Gone,
}


def _request(
    api: kubernetes.client.ApiClient,
    method: str,
    path: str,
    *,
    what: str,
    body: object = None,
    content_type: str = "application/json",
) -> resources.JsonObject:
    try:
        return resources.request_json(
            api, method, path, body=body, content_type=content_type, timeout=TIMEOUT_SECONDS
        )
    except ApiException as exc:
        kind = _BY_STATUS.get(exc.status or 0, errors.KubeError)
        # from None: the client's exception would put every response header in the traceback.
        raise kind(f"{what}: {apierrors.describe(exc)}") from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise errors.SourceError(f"{what}: {errors.first_line(exc)}") from None


def list_storage_classes(api: kubernetes.client.ApiClient) -> object:
    """The StorageClassList (a cluster has a handful: one page)."""
    return _request(api, "GET", STORAGE_CLASSES.collection_path(), what="list StorageClasses")


class KubeSecrets:
    """The Secrets of one cluster (lens/storage/secrets.py's Secrets)."""

    def __init__(self, api: kubernetes.client.ApiClient, *, cluster: str) -> None:
        self._api = api
        self._cluster = cluster

    def read(self, ref: SecretRef) -> SecretData | None:
        path = SECRETS.object_path(ref.namespace, ref.name)
        try:
            document = _request(self._api, "GET", path, what=self._what("get", ref))
        except errors.NotFound:
            return None
        return secrets.parse_secret(document, ref)

    def create(self, ref: SecretRef, data: Mapping[str, str]) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": ref.name, "namespace": ref.namespace, "labels": _MANAGED_BY},
            "type": "Opaque",
            "data": dict(data),
        }
        path = SECRETS.collection_path(ref.namespace)
        _request(self._api, "POST", path, body=body, what=self._what("create", ref))

    def replace(self, ref: SecretRef, data: Mapping[str, str], *, previous: SecretData) -> None:
        # A merge patch keeps the Secret's labels and annotations; the resourceVersion makes it
        # conditional, so a concurrent writer's change is not overwritten unseen.
        removed: dict[str, str | None] = {key: None for key in previous.data if key not in data}
        body = {
            "metadata": {"resourceVersion": previous.resource_version},
            "data": {**removed, **data},
        }
        _request(
            self._api,
            "PATCH",
            SECRETS.object_path(ref.namespace, ref.name),
            body=body,
            content_type="application/merge-patch+json",
            what=self._what("update", ref),
        )

    def _what(self, verb: str, ref: SecretRef) -> str:
        return f"cluster {self._cluster}: {verb} secret {ref}"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Known:
    digest: str  # of the kubeconfig's entry
    target: ClusterTarget
    api: kubernetes.client.ApiClient | None


class ClusterClients:
    """The home cluster and those of controller.clusters_secret, as gathering targets. A client
    is made again only when its kubeconfig changed; when the Secret cannot be read, the clusters
    last read carry on."""

    def __init__(
        self, home_api: kubernetes.client.ApiClient, *, home: str, clusters_secret: str
    ) -> None:
        self._home_secrets = KubeSecrets(home_api, cluster=home)
        self._home = ClusterTarget(name=home, secrets=self._home_secrets)
        self._secret = SecretRef.parse(clusters_secret) if clusters_secret else None
        self._known: dict[str, _Known] = {}
        self._entries: Mapping[str, str] = {}
        self._failing = False

    def targets(self) -> list[ClusterTarget]:
        if self._secret is None:
            return [self._home]
        known = {}
        for name, value in sorted(self._read_entries(self._secret).items()):
            if name == self._home.name:
                continue  # the home cluster is reached with the role's own client
            digest = hashlib.sha256(value.encode()).hexdigest()
            previous = self._known.pop(name, None)
            if previous is not None and previous.digest == digest:
                known[name] = previous
                continue
            made = self._connect(name, value, digest)
            if made.api is None and previous is not None and previous.api is not None:
                known[name] = previous  # a broken edit does not stop a working cluster
                continue
            if previous is not None:
                _close(previous)
            known[name] = made
        self.close()  # the clusters no longer listed
        self._known = known
        return [self._home, *(k.target for k in known.values())]

    def close(self) -> None:
        """Close the clients of the clusters known."""
        for known in self._known.values():
            _close(known)
        self._known = {}

    def _read_entries(self, ref: SecretRef) -> Mapping[str, str]:
        try:
            secret = self._home_secrets.read(ref)
        except errors.LensError as exc:
            if not self._failing:
                log.warning(
                    "cannot read the clusters secret; keeping the clusters known",
                    extra={"secret": str(ref), "reason": str(exc)},
                )
            self._failing = True
            return self._entries
        self._failing = False
        self._entries = {} if secret is None else dict(secret.data)
        return self._entries

    def _connect(self, name: str, value: str, digest: str) -> _Known:
        """A client for the Secret's entry `name`, or a target naming why there is none."""
        problem = ""
        if not names.is_dns_label(name):
            problem = "a cluster name must be " + names.DNS_LABEL
        else:
            try:
                text = secrets.decode_text(value, what="its kubeconfig")
                api = clients.from_kubeconfig_text(text, where=f"clusters secret key {name}")
            except errors.SourceError as exc:
                problem = str(exc)
            else:
                target = ClusterTarget(name=name, secrets=KubeSecrets(api, cluster=name))
                return _Known(digest=digest, target=target, api=api)
        target = ClusterTarget(name=name, secrets=None, problem=problem)
        return _Known(digest=digest, target=target, api=None)


def _close(known: _Known) -> None:
    if known.api is not None:
        known.api.close()  # type: ignore[no-untyped-call]  # untyped upstream
