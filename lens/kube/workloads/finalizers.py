"""Lens's finalizer on tracked workloads of the kinds an operator opts in to.

A workload of such a kind gets the finalizer once its row is committed; when its deletion is
requested, the finalizer is removed as soon as its final state (status Deleted) is committed.
If the database cannot be reached, the removal waits at most `grace` seconds from the moment
the deletion was seen and then proceeds, counted and logged as lost history: a finalizer must
never block a deletion for long. Patches are JSON patches guarded by the resourceVersion they
were computed from, so another controller's finalizers are never overwritten.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, resources
from lens.kube.machinery.cache import Change, ChangeType, JsonObject
from lens.kube.machinery.resources import Kind
from lens.kube.workloads import gpupods
from lens.kube.workloads.workloadrecording import WorkloadWrite
from lens.runtime import errors

log = logging.getLogger(__name__)

FINALIZER = "lens.dev/gpu-workload"
ORIGINAL_FINALIZER = "primus-lens/gpu-workload-exporter-finalizer"  # removed on uninstall too

Lookup = Callable[[Kind, str], "JsonObject | None"]  # the cached object of a kind by uid
KindOf = Callable[[str, str], "Kind | None"]  # a watched kind by apiVersion and kind


@dataclasses.dataclass(slots=True)
class _Deletion:
    kind: Kind
    seen_at: float
    committed: bool = False


def has_finalizer(obj: JsonObject, name: str = FINALIZER) -> bool:
    return name in (gpupods.metadata(obj).get("finalizers") or [])


def finalizers_patch(obj: JsonObject, finalizers: Sequence[str]) -> list[dict[str, Any]]:
    """A JSON patch setting the finalizers, applied only to the version they were read from."""
    return [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": gpupods.metadata(obj).get("resourceVersion"),
        },
        {"op": "add", "path": "/metadata/finalizers", "value": list(finalizers)},
    ]


def patch_finalizers(
    api: kubernetes.client.ApiClient, kind: Kind, obj: JsonObject, finalizers: Sequence[str]
) -> None:
    meta = gpupods.metadata(obj)
    path = kind.object_path(str(meta.get("namespace") or ""), str(meta.get("name")))
    resources.request_json(
        api,
        "PATCH",
        path,
        body=finalizers_patch(obj, finalizers),
        content_type="application/json-patch+json",
    )


class FinalizerKeeper:
    """One cluster's finalizers; its own thread talks to the API."""

    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        *,
        kinds: Sequence[str],
        grace_seconds: float,
        lookup: Lookup,
        kind_of: KindOf,
        on_released: Callable[[], None],
        on_forced: Callable[[], None],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._kinds = frozenset(kinds)
        self._grace = grace_seconds
        self._lookup = lookup
        self._kind_of = kind_of
        self._on_released = on_released
        self._on_forced = on_forced
        self._monotonic = monotonic
        self._to_add: dict[str, Kind] = {}
        self._deletions: dict[str, _Deletion] = {}
        self._wake = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None

    def wants(self, kind: Kind) -> bool:
        return kind.kind in self._kinds

    # -- from the reflector and the writer ----------------------------------------------

    def observe(self, kind: Kind, changes: Sequence[Change]) -> None:
        """Deletions requested (or done) for objects of opted-in kinds, as the watch saw them."""
        if not self.wants(kind):
            return
        with self._wake:
            for change in changes:
                uid = str(gpupods.metadata(change.object).get("uid"))
                if change.type is ChangeType.DELETED:
                    self._deletions.pop(uid, None)
                    self._to_add.pop(uid, None)
                elif gpupods.deleted_at(change.object) and has_finalizer(change.object):
                    self._deletions.setdefault(uid, _Deletion(kind, self._monotonic()))
            self._wake.notify()

    def committed(self, writes: Sequence[WorkloadWrite]) -> None:
        """Rows are stored: final states release, live tracked workloads get the finalizer."""
        with self._wake:
            for write in writes:
                if write.state.kind not in self._kinds:
                    continue
                kind = self._kind_of(write.state.group_version, write.state.kind)
                if kind is None:
                    continue
                uid = write.state.uid
                if write.state.deleted:
                    pending = self._deletions.setdefault(uid, _Deletion(kind, self._monotonic()))
                    pending.committed = True
                    self._to_add.pop(uid, None)
                elif not has_finalizer(write.object):
                    self._to_add[uid] = kind
            self._wake.notify()

    # -- the keeper's thread ------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="finalizers", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout)

    def pending(self) -> int:
        with self._wake:
            return len(self._deletions) + len(self._to_add)

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait(timeout=0.25)
                if self._stop:
                    return
                to_add = dict(self._to_add)
                deletions = dict(self._deletions)
            for uid, kind in to_add.items():
                self._add(uid, kind)
            for uid, deletion in deletions.items():
                self._release_if_due(uid, deletion)

    def _add(self, uid: str, kind: Kind) -> None:
        obj = self._lookup(kind, uid)
        done = obj is None or has_finalizer(obj) or gpupods.deleted_at(obj) is not None
        if not done and obj is not None:
            current = list(gpupods.metadata(obj).get("finalizers") or [])
            done = self._patch(kind, obj, [*current, FINALIZER])
        if done:
            with self._wake:
                if self._to_add.get(uid) is kind:
                    del self._to_add[uid]

    def _release_if_due(self, uid: str, deletion: _Deletion) -> None:
        overdue = self._monotonic() - deletion.seen_at >= self._grace
        if not deletion.committed and not overdue:
            return
        obj = self._lookup(deletion.kind, uid)
        if obj is not None and has_finalizer(obj):
            current = gpupods.metadata(obj).get("finalizers") or []
            if not self._patch(deletion.kind, obj, [f for f in current if f != FINALIZER]):
                return
            if deletion.committed:
                self._on_released()
            else:
                self._on_forced()
                log.error(
                    "finalizer removed without the workload's final state stored "
                    "(database unreachable past the grace period)",
                    extra={"workload": gpupods.metadata(obj).get("name"), "uid": uid},
                )
        with self._wake:
            self._deletions.pop(uid, None)

    def _patch(self, kind: Kind, obj: JsonObject, finalizers: list[str]) -> bool:
        """True when written or no longer needed (gone); False to try again later."""
        try:
            patch_finalizers(self._api, kind, obj, finalizers)
        except ApiException as exc:
            if exc.status == 404:
                return True
            if exc.status not in (409, 422):  # 409/422: our copy was stale; the watch brings news
                log.warning("finalizer patch failed", extra={"reason": apierrors.describe(exc)})
            return False
        except (urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
            log.warning("finalizer patch failed", extra={"reason": str(exc)})
            return False
        return True
