"""The emulator's object store: a cluster-wide resourceVersion, optimistic concurrency, watch
history, finalizers, and dependents for garbage collection.

Stored objects are never mutated: every write stores a new dict, so lists, snapshots and
watch events can share them freely. server.py turns HTTP requests into calls here; watching.py
reads `events_after`; collecting.py deletes dependents of deleted owners.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import random
import threading
from collections.abc import Callable, Iterable
from typing import Any, Literal

from lens.runtime.clock import Clock
from lens.sim.kube import objects, patching
from lens.sim.kube.resources import Registry, ResourceType
from lens.sim.kube.selectors import FieldSelector, LabelSelector
from lens.sim.kube.status import ApiError, already_exists, bad_request, conflict, gone, not_found

JsonObject = dict[str, Any]
EventType = Literal["ADDED", "MODIFIED", "DELETED"]
ObjectKey = tuple[str, str]  # (namespace or "", name)
TypeKey = tuple[str, str]  # (group, plural)

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_NAMESPACE = ResourceType("", "v1", "namespaces", "Namespace", False)


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    rv: int
    type: EventType
    obj: JsonObject
    old: JsonObject | None


@dataclasses.dataclass(frozen=True, slots=True)
class ListPage:
    items: list[JsonObject]
    resource_version: int
    continue_token: str
    remaining: int | None


@dataclasses.dataclass(slots=True)
class _Table:
    objects: dict[ObjectKey, JsonObject] = dataclasses.field(default_factory=dict)
    history: collections.deque[Event] = dataclasses.field(default_factory=collections.deque)
    floor: int = 0  # events at or below this resourceVersion are no longer retained


def meta(obj: JsonObject) -> JsonObject:
    metadata: JsonObject = obj["metadata"]
    return metadata


def key_of(obj: JsonObject) -> ObjectKey:
    return (meta(obj).get("namespace", ""), meta(obj)["name"])


class Store:
    """All objects of the emulated cluster, guarded by one lock."""

    def __init__(
        self,
        registry: Registry,
        *,
        clock: Clock,
        history_size: int = 100,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = registry
        self._clock = clock
        self._history_size = history_size
        self._rng = rng or random.Random()
        self._lock = threading.RLock()
        self.changed = threading.Condition(self._lock)
        self._rv = 0
        self._tables: dict[TypeKey, _Table] = collections.defaultdict(_Table)
        self._dependents: dict[str, set[tuple[TypeKey, ObjectKey]]] = collections.defaultdict(set)
        self._uids: dict[str, tuple[TypeKey, ObjectKey]] = {}
        self._on_removed: list[Callable[[ResourceType, JsonObject], None]] = []
        self._on_owner_deleting: list[Callable[[JsonObject, str], None]] = []
        self._snapshots: collections.OrderedDict[str, tuple[int, list[JsonObject]]] = (
            collections.OrderedDict()
        )
        self._snapshot_ids = itertools.count(1)
        for name in DEFAULT_NAMESPACES:
            self.create(_NAMESPACE, None, {"metadata": {"name": name}})

    # -- reading ---------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> JsonObject:
        with self._lock:
            obj = self._tables[rtype.key].objects.get((namespace or "", name))
        if obj is None:
            raise not_found(rtype.plural, name, rtype.group)
        return self._as_version(rtype, obj)

    def select(
        self,
        rtype: ResourceType,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> tuple[list[JsonObject], int]:
        """Matching objects sorted by namespace and name, and the resourceVersion read at."""
        with self._lock:
            table = self._tables[rtype.key]
            rv = self._rv
            keys = sorted(table.objects)
            found = [table.objects[k] for k in keys if namespace is None or k[0] == namespace]
        matching = [
            self._as_version(rtype, o)
            for o in found
            if labels.matches(meta(o).get("labels")) and fields.matches(o)
        ]
        return matching, rv

    def list_page(
        self,
        rtype: ResourceType,
        namespace: str | None,
        *,
        labels: LabelSelector,
        fields: FieldSelector,
        limit: int = 0,
        continue_token: str = "",
    ) -> ListPage:
        """One page of a list; `continue_token` pages through a snapshot taken by the first page."""
        if continue_token:
            rv, items = self._snapshot(continue_token)
        else:
            items, rv = self.select(rtype, namespace, labels, fields)
        if limit <= 0 or len(items) <= limit:
            return ListPage(items, rv, "", None)
        page, rest = items[:limit], items[limit:]
        with self._lock:
            snapshot_id = str(next(self._snapshot_ids))
            self._snapshots[snapshot_id] = (rv, rest)
            while len(self._snapshots) > 256:
                self._snapshots.popitem(last=False)
        return ListPage(page, rv, snapshot_id, len(rest))

    def _snapshot(self, token: str) -> tuple[int, list[JsonObject]]:
        with self._lock:
            snapshot = self._snapshots.pop(token, None)
        if snapshot is None:
            raise gone(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter."
            )
        return snapshot

    def events_since(self, rtype: ResourceType, rv: int) -> tuple[list[Event], int]:
        """Events of this type newer than `rv`, and the resourceVersion they bring a reader to.

        410 Gone when events after `rv` may no longer be retained.
        """
        with self._lock:
            table = self._tables[rtype.key]
            if rv < table.floor:
                raise gone(f"too old resource version: {rv} ({table.floor + 1})")
            newer = [e for e in reversed(table.history) if e.rv > rv]
            reached = max(rv, self._rv)
        newer.reverse()
        events = [dataclasses.replace(e, obj=self._as_version(rtype, e.obj)) for e in newer]
        return events, reached

    def wait_for_change(self, rv: int, timeout: float) -> None:
        """Block until the store moves past `rv` or `timeout` seconds pass."""
        with self._lock:
            if self._rv <= rv:
                self.changed.wait(timeout)

    def _as_version(self, rtype: ResourceType, obj: JsonObject) -> JsonObject:
        if obj.get("apiVersion") == rtype.api_version:
            return obj
        return {**obj, "apiVersion": rtype.api_version}

    # -- writing ---------------------------------------------------------------------------

    def create(
        self,
        rtype: ResourceType,
        namespace: str | None,
        body: Any,
        *,
        keep_status: bool = False,
    ) -> JsonObject:
        """Store a new object; `keep_status` is for simulated controllers, not API clients."""
        obj = objects.check_envelope(rtype, body)
        with self._lock:
            if rtype.namespaced:
                self._require_namespace(namespace or "")
            obj = objects.prepare_create(
                rtype,
                obj,
                namespace=namespace,
                now=self._clock.time(),
                rng=self._rng,
                keep_status=keep_status,
            )
            table = self._tables[rtype.key]
            if key_of(obj) in table.objects:
                raise already_exists(rtype.plural, meta(obj)["name"], rtype.group)
            return self._commit(rtype, "ADDED", obj, None)

    def _require_namespace(self, namespace: str) -> None:
        if not namespace:
            raise bad_request("a namespaced resource needs a namespace")
        found = self._tables[_NAMESPACE.key].objects.get(("", namespace))
        if found is None:
            raise not_found("namespaces", namespace)
        if meta(found).get("deletionTimestamp"):
            raise ApiError(
                403,
                "Forbidden",
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )

    def update(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str = "",
    ) -> JsonObject:
        """PUT: replace the object (or only its status), honouring metadata.resourceVersion."""
        new = objects.check_envelope(rtype, body)
        with self._lock:
            current = self._current(rtype, namespace, name)
            objects.check_update_identity(rtype, current, new)
            wanted_rv = meta(new).get("resourceVersion")
            if wanted_rv and wanted_rv != meta(current)["resourceVersion"]:
                raise conflict(rtype.plural, name, rtype.group)
            return self._write(rtype, current, new, subresource=subresource)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        kind: Literal["merge", "strategic", "json"],
        body: Any,
        *,
        subresource: str = "",
    ) -> JsonObject:
        with self._lock:
            current = self._current(rtype, namespace, name)
            try:
                if kind == "json":
                    patched = patching.json_patch(current, body)
                elif kind == "strategic":
                    patched = patching.strategic_merge_patch(current, body)
                else:
                    patched = patching.merge_patch(current, body)
            except patching.PatchError as exc:
                raise ApiError(422, "Invalid", str(exc)) from exc
            new = objects.check_envelope(rtype, patched)
            objects.check_update_identity(rtype, current, new)
            wanted_rv = meta(new).get("resourceVersion")
            if wanted_rv and wanted_rv != meta(current)["resourceVersion"]:
                raise conflict(rtype.plural, name, rtype.group)
            return self._write(rtype, current, new, subresource=subresource)

    def put_status(
        self, rtype: ResourceType, namespace: str | None, name: str, status: JsonObject
    ) -> JsonObject:
        """Set the whole status, as a simulated controller or kubelet would."""
        with self._lock:
            current = self._current(rtype, namespace, name)
            return self._write(rtype, current, {**current, "status": status}, subresource="status")

    def _current(self, rtype: ResourceType, namespace: str | None, name: str) -> JsonObject:
        obj = self._tables[rtype.key].objects.get(
            (namespace or "", name) if rtype.namespaced else ("", name)
        )
        if obj is None:
            raise not_found(rtype.plural, name, rtype.group)
        return obj

    def _write(
        self, rtype: ResourceType, current: JsonObject, new: JsonObject, *, subresource: str
    ) -> JsonObject:
        if subresource == "status":
            merged = {**current, "status": new.get("status")}
            if merged["status"] is None:
                merged.pop("status")
        else:
            merged = dict(new)
            if rtype.status:
                merged.pop("status", None)
                if "status" in current:
                    merged["status"] = current["status"]
            merged["metadata"] = self._updated_metadata(
                current, new, bump=objects.spec_changed(current, merged)
            )
        merged["metadata"] = {
            **merged["metadata"],
            "resourceVersion": meta(current)["resourceVersion"],
        }
        if merged == current:
            return current  # the API server does not write, or tell watchers, about a no-op
        if meta(merged).get("deletionTimestamp") and not meta(merged).get("finalizers"):
            return self._remove(rtype, merged)
        return self._commit(rtype, "MODIFIED", merged, current)

    def _updated_metadata(self, current: JsonObject, new: JsonObject, *, bump: bool) -> JsonObject:
        old_meta = meta(current)
        metadata = dict(new.get("metadata") or {})
        for fixed in (
            "uid",
            "creationTimestamp",
            "namespace",
            "name",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if fixed in old_meta:
                metadata[fixed] = old_meta[fixed]
            else:
                metadata.pop(fixed, None)
        if bump and "generation" in old_meta:
            metadata["generation"] = old_meta["generation"] + 1
        return metadata

    def _commit(
        self, rtype: ResourceType, kind: EventType, obj: JsonObject, old: JsonObject | None
    ) -> JsonObject:
        """Store `obj` at the next resourceVersion and record the event (lock held)."""
        self._rv += 1
        stored = {**obj, "metadata": {**meta(obj), "resourceVersion": str(self._rv)}}
        table = self._tables[rtype.key]
        table.objects[key_of(stored)] = stored
        self._uids[meta(stored)["uid"]] = (rtype.key, key_of(stored))
        self._index_owners(rtype, old, stored)
        self._record(table, Event(self._rv, kind, stored, old))
        return self._as_version(rtype, stored)

    def _remove(self, rtype: ResourceType, obj: JsonObject) -> JsonObject:
        """Delete for good: the DELETED event carries the last state at a new resourceVersion."""
        self._rv += 1
        final = {**obj, "metadata": {**meta(obj), "resourceVersion": str(self._rv)}}
        table = self._tables[rtype.key]
        previous = table.objects.pop(key_of(obj), None)
        self._uids.pop(meta(obj)["uid"], None)
        self._index_owners(rtype, previous, None)
        self._record(table, Event(self._rv, "DELETED", final, previous))
        for listener in self._on_removed:
            listener(rtype, final)
        return self._as_version(rtype, final)

    def _record(self, table: _Table, event: Event) -> None:
        if len(table.history) >= self._history_size:
            table.floor = table.history.popleft().rv
        table.history.append(event)
        self.changed.notify_all()

    def _index_owners(
        self, rtype: ResourceType, old: JsonObject | None, new: JsonObject | None
    ) -> None:
        if old is not None:
            for ref in meta(old).get("ownerReferences") or []:
                self._dependents[ref.get("uid", "")].discard((rtype.key, key_of(old)))
        if new is not None:
            for ref in meta(new).get("ownerReferences") or []:
                self._dependents[ref.get("uid", "")].add((rtype.key, key_of(new)))

    # -- deleting --------------------------------------------------------------------------

    def delete(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        *,
        propagation: str | None = None,
        preconditions: JsonObject | None = None,
    ) -> JsonObject:
        """DELETE: remove now, or mark with deletionTimestamp while finalizers remain."""
        with self._lock:
            current = self._current(rtype, namespace, name)
            self._check_preconditions(rtype, current, preconditions or {})
            if meta(current).get("deletionTimestamp"):
                return self._as_version(rtype, current)
            policy = propagation or _default_propagation(rtype)
            finalizers = list(meta(current).get("finalizers") or [])
            if policy == "Foreground" and self._dependents.get(meta(current)["uid"]):
                finalizers.append("foregroundDeletion")
            if policy == "Orphan":
                self._orphan_dependents(meta(current)["uid"])
            if not finalizers and rtype.kind != "Namespace":
                return self._remove(rtype, current)
            marked = {
                **current,
                "metadata": {
                    **meta(current),
                    "finalizers": finalizers,
                    "deletionTimestamp": objects.timestamp(self._clock.time()),
                    "deletionGracePeriodSeconds": 0,
                },
            }
            if rtype.kind == "Namespace":
                marked["status"] = {**(current.get("status") or {}), "phase": "Terminating"}
            result = self._commit(rtype, "MODIFIED", marked, current)
        for listener in self._on_owner_deleting:
            listener(marked, policy)
        return result

    def _check_preconditions(
        self, rtype: ResourceType, current: JsonObject, preconditions: JsonObject
    ) -> None:
        uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
        if uid and uid != meta(current)["uid"]:
            raise ApiError(
                409,
                "Conflict",
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {meta(current)['uid']}",
            )
        if rv and rv != meta(current)["resourceVersion"]:
            raise conflict(rtype.plural, meta(current)["name"], rtype.group)

    def _orphan_dependents(self, owner_uid: str) -> None:
        for type_key, obj_key in list(self._dependents.get(owner_uid, ())):
            rtype = self._type_of(type_key)
            dependent = self._tables[type_key].objects.get(obj_key)
            if rtype is None or dependent is None:
                continue
            refs = [
                r for r in meta(dependent).get("ownerReferences") or [] if r.get("uid") != owner_uid
            ]
            metadata = {**meta(dependent), "ownerReferences": refs}
            if not refs:
                metadata.pop("ownerReferences")
            self._commit(rtype, "MODIFIED", {**dependent, "metadata": metadata}, dependent)

    def remove_finalizer(
        self, rtype: ResourceType, namespace: str | None, name: str, finalizer: str
    ) -> None:
        """What a controller does when its cleanup is done (used by the garbage collector)."""
        with self._lock:
            current = self._tables[rtype.key].objects.get((namespace or "", name))
            if current is None or finalizer not in (meta(current).get("finalizers") or []):
                return
            finalizers = [f for f in meta(current)["finalizers"] if f != finalizer]
            updated = {**current, "metadata": {**meta(current), "finalizers": finalizers}}
            if not finalizers:
                self._remove(rtype, updated)
            else:
                self._commit(rtype, "MODIFIED", updated, current)

    def purge(self, rtype: ResourceType, namespace: str | None, name: str) -> bool:
        """Remove an object being deleted once nothing holds it (a finished namespace)."""
        with self._lock:
            current = self._tables[rtype.key].objects.get((namespace or "", name))
            if current is None:
                return True
            if not meta(current).get("deletionTimestamp") or meta(current).get("finalizers"):
                return False
            self._remove(rtype, current)
            return True

    def exists(self, uid: str) -> bool:
        with self._lock:
            return uid in self._uids

    def by_uid(self, uid: str) -> tuple[ResourceType, JsonObject] | None:
        with self._lock:
            where = self._uids.get(uid)
            if where is None:
                return None
            rtype = self._type_of(where[0])
            obj = self._tables[where[0]].objects.get(where[1])
        return None if rtype is None or obj is None else (rtype, obj)

    def dependents(self, owner_uid: str) -> list[tuple[ResourceType, JsonObject]]:
        with self._lock:
            found = []
            for type_key, obj_key in list(self._dependents.get(owner_uid, ())):
                rtype = self._type_of(type_key)
                obj = self._tables[type_key].objects.get(obj_key)
                if rtype is not None and obj is not None:
                    found.append((rtype, obj))
            return found

    def namespaced_objects(self, namespace: str) -> list[tuple[ResourceType, JsonObject]]:
        with self._lock:
            found: list[tuple[ResourceType, JsonObject]] = []
            for type_key, table in self._tables.items():
                rtype = self._type_of(type_key)
                if rtype is None or not rtype.namespaced:
                    continue
                found.extend((rtype, o) for k, o in table.objects.items() if k[0] == namespace)
            return found

    def _type_of(self, type_key: TypeKey) -> ResourceType | None:
        for rtype in self.registry.all():
            if rtype.key == type_key:
                return rtype
        return None

    def on_removed(self, listener: Callable[[ResourceType, JsonObject], None]) -> None:
        self._on_removed.append(listener)

    def on_owner_deleting(self, listener: Callable[[JsonObject, str], None]) -> None:
        self._on_owner_deleting.append(listener)

    # -- faults ----------------------------------------------------------------------------

    def forget_history(self) -> None:
        """An API server restart: objects stay, the watch history before now is gone."""
        with self._lock:
            for table in self._tables.values():
                table.history.clear()
                table.floor = self._rv
            self._snapshots.clear()
            self.changed.notify_all()

    def types_in_use(self) -> Iterable[TypeKey]:
        with self._lock:
            return list(self._tables)


def _default_propagation(rtype: ResourceType) -> str:
    # batch/v1 Jobs orphan their pods when deleted through the API without a policy.
    return "Orphan" if (rtype.group, rtype.kind) == ("batch", "Job") else "Background"
