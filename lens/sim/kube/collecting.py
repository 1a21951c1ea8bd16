"""The garbage collector and namespace controller of the emulator.

When an owner is removed, its dependents (ownerReferences) are deleted in the background, or
lose the reference when another owner still exists; a Foreground deletion waits for them; a
terminating namespace is emptied, then removed. Like the real controllers this runs on its own
thread, after the API call that triggered it has answered; `settle()` waits for it.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any

from lens.sim.kube.resources import ResourceType
from lens.sim.kube.status import ApiError
from lens.sim.kube.store import Store, meta

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


class Collector:
    """Background deletion of dependents and namespace contents."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: collections.deque[tuple[str, Any]] = collections.deque()
        self._wake = threading.Condition()
        self._busy = False
        self._stopped = False
        store.on_removed(self._removed)
        store.on_owner_deleting(self._deleting)
        self._thread = threading.Thread(target=self._run, name="kube-sim-gc", daemon=True)
        self._thread.start()

    def _removed(self, rtype: ResourceType, obj: JsonObject) -> None:
        self._put(("owner-gone", meta(obj)["uid"]))
        # What waited for this object may now finish: its namespace, its foreground owners.
        if meta(obj).get("namespace"):
            self._put(("namespace", meta(obj)["namespace"]))
        for ref in meta(obj).get("ownerReferences") or []:
            self._put(("foreground", ref.get("uid", "")))

    def _deleting(self, obj: JsonObject, policy: str) -> None:
        if obj["kind"] == "Namespace":
            self._put(("namespace", meta(obj)["name"]))
        elif policy == "Foreground":
            self._put(("foreground", meta(obj)["uid"]))

    def _put(self, item: tuple[str, Any]) -> None:
        with self._wake:
            self._queue.append(item)
            self._wake.notify_all()

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait until every queued deletion has been carried out."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._queue or self._stopped)
                if self._stopped:
                    return
                item = self._queue.popleft()
                self._busy = True
            try:
                self._handle(*item)
            except ApiError:
                log.debug("garbage collection step lost a race", exc_info=True)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _handle(self, what: str, subject: Any) -> None:
        if what == "owner-gone":
            self._collect_dependents(subject)
        elif what == "foreground":
            self._foreground(subject)
        elif what == "namespace":
            self._empty_namespace(subject)

    def _collect_dependents(self, owner_uid: str) -> None:
        for rtype, dependent in self._store.dependents(owner_uid):
            others = [
                ref
                for ref in meta(dependent).get("ownerReferences") or []
                if ref.get("uid") != owner_uid and self._store.exists(ref.get("uid", ""))
            ]
            namespace, name = meta(dependent).get("namespace"), meta(dependent)["name"]
            if others:
                self._store.patch(
                    rtype, namespace, name, "merge", {"metadata": {"ownerReferences": others}}
                )
            else:
                self._store.delete(rtype, namespace, name, propagation="Background")

    def _foreground(self, owner_uid: str) -> None:
        found = self._store.by_uid(owner_uid)
        if found is None:
            return
        rtype, owner = found
        if "foregroundDeletion" not in (meta(owner).get("finalizers") or []):
            return
        remaining = self._store.dependents(owner_uid)
        for dep_type, dependent in remaining:
            if not meta(dependent).get("deletionTimestamp"):
                namespace, name = meta(dependent).get("namespace"), meta(dependent)["name"]
                self._store.delete(dep_type, namespace, name, propagation="Foreground")
        if not self._store.dependents(owner_uid):
            namespace, name = meta(owner).get("namespace"), meta(owner)["name"]
            self._store.remove_finalizer(rtype, namespace, name, "foregroundDeletion")

    def _empty_namespace(self, namespace: str) -> None:
        namespaces = self._store.registry.find("", "v1", "namespaces")
        assert namespaces is not None
        try:
            current = self._store.get(namespaces, None, namespace)
        except ApiError:
            return
        if not meta(current).get("deletionTimestamp"):
            return
        for rtype, obj in self._store.namespaced_objects(namespace):
            if not meta(obj).get("deletionTimestamp"):
                self._store.delete(rtype, namespace, meta(obj)["name"])
        # Objects held by finalizers keep the namespace; their removal brings us back here.
        if not self._store.namespaced_objects(namespace):
            self._store.purge(namespaces, None, namespace)
