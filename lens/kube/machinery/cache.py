"""Objects of one kind as the reflector last saw them, indexed by node, owner and namespace.

Objects are the API's JSON (dicts), keyed by uid. `apply` takes one watch event and `replace`
a full listing; both return the changes they made, so a relist after 410 Gone yields exactly the
difference — deletions that happened while nobody watched come out as deletions. The cache holds
one entry per object of the kind in the cluster: its bound is the cluster's size.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

JsonObject = dict[str, Any]


class ChangeType(enum.Enum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    type: ChangeType
    object: JsonObject  # as it is now; for DELETED, as it was last seen
    old: JsonObject | None  # as it was before (None for ADDED)


def uid_of(obj: JsonObject) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def resource_version_of(obj: JsonObject) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def node_of(obj: JsonObject) -> str:
    return str((obj.get("spec") or {}).get("nodeName") or "")


def namespace_of(obj: JsonObject) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def owner_uids(obj: JsonObject) -> tuple[str, ...]:
    references = (obj.get("metadata") or {}).get("ownerReferences") or []
    return tuple(str(r.get("uid")) for r in references if isinstance(r, dict) and r.get("uid"))


class ObjectCache:
    """Thread-safe: the reflector writes, any thread reads (copies of the index sets)."""

    def __init__(self) -> None:
        self._objects: dict[str, JsonObject] = {}
        self._by_node: defaultdict[str, set[str]] = defaultdict(set)
        self._by_owner: defaultdict[str, set[str]] = defaultdict(set)
        self._by_namespace: defaultdict[str, set[str]] = defaultdict(set)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    def get(self, uid: str) -> JsonObject | None:
        with self._lock:
            return self._objects.get(uid)

    def objects(self) -> list[JsonObject]:
        with self._lock:
            return list(self._objects.values())

    def on_node(self, node: str) -> list[JsonObject]:
        return self._indexed(self._by_node, node)

    def owned_by(self, owner_uid: str) -> list[JsonObject]:
        return self._indexed(self._by_owner, owner_uid)

    def in_namespace(self, namespace: str) -> list[JsonObject]:
        return self._indexed(self._by_namespace, namespace)

    def apply(self, change_type: ChangeType, obj: JsonObject) -> Change | None:
        """One watch event; None when it changes nothing (a repeat of what is held)."""
        uid = uid_of(obj)
        if not uid:
            return None
        with self._lock:
            old = self._objects.get(uid)
            if change_type is ChangeType.DELETED:
                if old is None:
                    return None
                self._remove(uid, old)
                return Change(type=ChangeType.DELETED, object=obj, old=old)
            if old is not None and resource_version_of(old) == resource_version_of(obj):
                return None
            if old is not None:
                self._remove(uid, old)
            self._add(uid, obj)
        kind = ChangeType.ADDED if old is None else ChangeType.MODIFIED
        return Change(type=kind, object=obj, old=old)

    def replace(self, listed: Iterable[JsonObject]) -> list[Change]:
        """A full listing: what was added, modified and deleted since the cache last saw it."""
        fresh = {uid_of(o): o for o in listed if uid_of(o)}
        changes: list[Change] = []
        with self._lock:
            for uid, gone in list(self._objects.items()):
                if uid not in fresh:
                    self._remove(uid, gone)
                    changes.append(Change(type=ChangeType.DELETED, object=gone, old=gone))
            for uid, obj in fresh.items():
                old = self._objects.get(uid)
                if old is not None and resource_version_of(old) == resource_version_of(obj):
                    continue
                if old is not None:
                    self._remove(uid, old)
                self._add(uid, obj)
                kind = ChangeType.ADDED if old is None else ChangeType.MODIFIED
                changes.append(Change(type=kind, object=obj, old=old))
        return changes

    def _indexed(self, index: defaultdict[str, set[str]], key: str) -> list[JsonObject]:
        with self._lock:
            return [self._objects[uid] for uid in index.get(key, ())]

    def _add(self, uid: str, obj: JsonObject) -> None:
        self._objects[uid] = obj
        self._by_node[node_of(obj)].add(uid)
        self._by_namespace[namespace_of(obj)].add(uid)
        for owner in owner_uids(obj):
            self._by_owner[owner].add(uid)

    def _remove(self, uid: str, obj: JsonObject) -> None:
        del self._objects[uid]
        _discard(self._by_node, node_of(obj), uid)
        _discard(self._by_namespace, namespace_of(obj), uid)
        for owner in owner_uids(obj):
            _discard(self._by_owner, owner, uid)


def _discard(index: defaultdict[str, set[str]], key: str, uid: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(uid)
        if not members:
            del index[key]
