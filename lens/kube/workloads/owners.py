"""Owner chains from watch caches: one reflector per kind an ownerReference names, never one
watch per object nor a GET per reconcile (the original's listeners, REFERENCE.md 11.2).

A kind is watched from the first time a GPU pod's chain reaches it (ReplicaSet, Deployment,
Job, CronJob, StatefulSet, PyTorchJob or any CRD, found through discovery) and stays watched:
its cache then answers both ways, up (`ancestors`) and down (`pods_under`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, resources
from lens.kube.machinery.cache import Change, JsonObject, ObjectCache
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.kube.machinery.resources import Discovery, Kind
from lens.kube.workloads import gpupods
from lens.runtime import errors

log = logging.getLogger(__name__)

KindChanges = Callable[[Kind, list[Change]], None]
KindListed = Callable[[Kind], None]

_RETRY_UNKNOWN_SECONDS = 60.0
_MAX_DEPTH = 16  # owner chains are short; this only guards against a reference cycle


class OwnerTree:
    """The workload kinds watched for one cluster, and the chains through them."""

    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        *,
        pods: ObjectCache,
        settings: WatchSettings,
        handle: KindChanges,
        on_listed: KindListed,
        discovery: Discovery | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._pods = pods
        self._settings = settings
        self._handle = handle
        self._on_listed = on_listed
        self._discovery = discovery or Discovery(api)
        self._monotonic = monotonic
        self._watched: dict[tuple[str, str], Reflector] = {}
        self._kinds: dict[tuple[str, str], Kind] = {}
        self._unknown: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()
        self._stopped = False

    def watch(self, api_version: str, kind: str) -> ObjectCache | None:
        """The cache of a kind, its reflector started on first need; None when the API does
        not serve the kind (asked again after a minute: a CRD may be installed later)."""
        key = (api_version, kind)
        with self._lock:
            reflector = self._watched.get(key)
            if reflector is not None or self._stopped:
                return reflector.cache if reflector is not None else None
            failed_at = self._unknown.get(key)
            if failed_at is not None and self._monotonic() - failed_at < _RETRY_UNKNOWN_SECONDS:
                return None
        try:
            found = self._discovery.find(api_version, kind)
        except (ApiException, OSError, urllib3.exceptions.HTTPError, errors.SourceError) as exc:
            with self._lock:
                self._unknown[key] = self._monotonic()
            log.warning(
                "cannot watch owner kind",
                extra={"kind": f"{api_version} {kind}", "reason": apierrors.describe(exc)},
            )
            return None
        return self._start(key, found)

    def _start(self, key: tuple[str, str], found: Kind) -> ObjectCache:
        with self._lock:
            existing = self._watched.get(key)
            if existing is not None:
                return existing.cache
            reflector = Reflector(
                name=found.plural,
                list_func=resources.Lister(self._api, found.collection_path()),
                cache=ObjectCache(),
                handle=lambda changes: self._handle(found, changes),
                settings=self._settings,
                on_listed=lambda: self._on_listed(found),
            )
            self._watched[key] = reflector
            self._kinds[key] = found
        log.info("watching owner kind", extra={"kind": f"{found.api_version} {found.kind}"})
        reflector.start()
        return reflector.cache

    def kind_of(self, api_version: str, kind: str) -> Kind | None:
        """A kind already watched (no discovery)."""
        with self._lock:
            return self._kinds.get((api_version, kind))

    def cache_of(self, kind: Kind) -> ObjectCache | None:
        """The cache of a kind already watched (None otherwise: no watch is started)."""
        with self._lock:
            reflector = self._watched.get((kind.api_version, kind.kind))
            return reflector.cache if reflector is not None else None

    def caches(self) -> list[ObjectCache]:
        with self._lock:
            return [r.cache for r in self._watched.values()]

    def synced(self) -> bool:
        with self._lock:
            return all(r.synced for r in self._watched.values())

    def reflectors(self) -> list[Reflector]:
        with self._lock:
            return list(self._watched.values())

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            reflectors = list(self._watched.values())
        for reflector in reflectors:
            reflector.stop()

    def ancestors(self, obj: JsonObject) -> list[JsonObject]:
        """The owners above `obj`, nearest first, as far as the caches know them."""
        chain: list[JsonObject] = []
        current = obj
        for _ in range(_MAX_DEPTH):
            reference = gpupods.controller_reference(current)
            if reference is None:
                break
            cache = self.watch(str(reference.get("apiVersion")), str(reference.get("kind")))
            owner = cache.get(str(reference.get("uid"))) if cache is not None else None
            if owner is None:
                break
            chain.append(owner)
            current = owner
        return chain

    def pods_under(self, uid: str) -> list[JsonObject]:
        """Every pod beneath the object with `uid`, through any depth of watched kinds."""
        caches = self.caches()
        found: list[JsonObject] = []
        pending, seen = [uid], {uid}
        while pending:
            owner = pending.pop()
            found.extend(self._pods.owned_by(owner))
            for cache in caches:
                for child in cache.owned_by(owner):
                    child_uid = str(gpupods.metadata(child).get("uid"))
                    if child_uid not in seen:
                        seen.add(child_uid)
                        pending.append(child_uid)
        return found
