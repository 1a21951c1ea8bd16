"""Further clusters named in a Secret of the home cluster (docs/multi-cluster.md).

Each key is a cluster's name (a DNS label, stored in every row's `cluster` column) and each
value a kubeconfig with its credentials embedded. The Secret is read again every refresh; a
cluster whose kubeconfig is unchanged keeps its client (and its watches); an entry that cannot
be used is logged and left out without disturbing the others; if the Secret cannot be read, the
clusters already known carry on.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, clients, resources
from lens.roles.controller.fleet import ClusterTarget, Fleet
from lens.runtime import errors, names

log = logging.getLogger(__name__)

SECRETS = resources.Kind(api_version="v1", kind="Secret", plural="secrets", namespaced=True)


class ClusterSecret:
    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        *,
        secret: str,
        home: ClusterTarget,
        fleet: Fleet,
    ) -> None:
        self._api = api
        self._namespace, self._name = secret.split("/")
        self._home = home
        self._fleet = fleet
        self._known: dict[str, tuple[str, ClusterTarget]] = {}  # name -> (digest, target)
        self._problems: dict[str, str] = {}

    def names(self) -> list[str]:
        """The clusters from the Secret in use now."""
        return sorted(self._known)

    def refresh(self) -> None:
        """Read the Secret and hand the fleet its clusters."""
        try:
            entries = self._read()
        except (ApiException, urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
            log.warning(
                "cannot read the clusters secret; keeping the clusters known",
                extra={
                    "secret": f"{self._namespace}/{self._name}",
                    "reason": apierrors.describe(exc),
                },
            )
            return
        known: dict[str, tuple[str, ClusterTarget]] = {}
        for name, text in entries.items():
            digest = hashlib.sha256(text.encode()).hexdigest()
            previous = self._known.get(name)
            if previous is not None and previous[0] == digest:
                known[name] = previous
                continue
            target = self._connect(name, text)
            if target is not None:
                known[name] = (digest, target)
            elif previous is not None:
                known[name] = previous  # a broken edit does not stop a working cluster
        self._known = known
        self._fleet.set_targets([self._home, *(t for _, t in known.values())])

    def _read(self) -> dict[str, str]:
        try:
            secret = resources.request_json(
                self._api, "GET", SECRETS.object_path(self._namespace, self._name)
            )
        except ApiException as exc:
            if exc.status == 404:
                return {}
            raise
        entries: dict[str, str] = {}
        for key, value in (secret.get("data") or {}).items():
            try:
                entries[str(key)] = base64.b64decode(str(value), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                self._problem(str(key), "its value is not base64-encoded UTF-8 text")
        return entries

    def _connect(self, name: str, text: str) -> ClusterTarget | None:
        if not names.is_dns_label(name):
            self._problem(name, "a cluster name must be a DNS label (lowercase, digits, '-')")
            return None
        if name == self._home.name:
            self._problem(name, "this is the home cluster's own name (cluster.name)")
            return None
        try:
            api = clients.from_kubeconfig_text(text, where=f"clusters secret key {name}")
        except errors.SourceError as exc:
            self._problem(name, str(exc))
            return None
        self._problems.pop(name, None)
        log.info("cluster added from the clusters secret", extra={"cluster": name})
        return ClusterTarget(name, api)

    def _problem(self, name: str, reason: str) -> None:
        if self._problems.get(name) != reason:  # logged once per distinct problem
            log.error("clusters secret entry left out", extra={"key": name, "reason": reason})
        self._problems[name] = reason

    def problems(self) -> dict[str, str]:
        return dict(self._problems)
