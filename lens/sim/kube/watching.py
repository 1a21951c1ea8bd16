"""Watch streams as the API server sends them: initial state, history replay, selector-aware
transitions, bookmarks, timeouts, and 410 Gone when the history no longer reaches back.

server.py writes each yielded event as one chunk of the HTTP response.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

from lens.sim.kube.faults import Faults
from lens.sim.kube.resources import ResourceType
from lens.sim.kube.selectors import FieldSelector, LabelSelector
from lens.sim.kube.status import ApiError, gone
from lens.sim.kube.store import Event, Store, meta

JsonObject = dict[str, Any]

_POLL_SECONDS = 0.2


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WatchRequest:
    rtype: ResourceType
    namespace: str | None
    labels: LabelSelector
    fields: FieldSelector
    resource_version: str
    bookmarks: bool
    timeout_seconds: float | None


class Watch:
    """One watch stream; iterate `events()` until it ends."""

    def __init__(
        self, store: Store, faults: Faults, request: WatchRequest, *, bookmark_interval: float
    ) -> None:
        self._store = store
        self._faults = faults
        self._request = request
        self._bookmark_interval = bookmark_interval
        self._generation = faults.close_generation

    def _matches(self, obj: JsonObject | None) -> bool:
        if obj is None:
            return False
        request = self._request
        if request.namespace is not None and meta(obj).get("namespace") != request.namespace:
            return False
        return request.labels.matches(meta(obj).get("labels")) and request.fields.matches(obj)

    def _translate(self, event: Event) -> JsonObject | None:
        """The event as this watcher sees it through its selectors (or None)."""
        now, before = self._matches(event.obj), self._matches(event.old)
        if event.type == "ADDED":
            kind = "ADDED" if now else None
        elif event.type == "DELETED":
            kind = "DELETED" if (now or before) else None
        elif now and before:
            kind = "MODIFIED"
        elif now:
            kind = "ADDED"
        elif before:
            kind = "DELETED"
        else:
            kind = None
        return None if kind is None else {"type": kind, "object": event.obj}

    def _bookmark(self, rv: int) -> JsonObject:
        rtype = self._request.rtype
        return {
            "type": "BOOKMARK",
            "object": {
                "kind": rtype.kind,
                "apiVersion": rtype.api_version,
                "metadata": {"resourceVersion": str(rv)},
            },
        }

    def _closed(self) -> bool:
        return self._faults.close_generation != self._generation

    def events(self) -> Iterator[JsonObject]:
        try:
            cursor, initial = self._start()
        except ApiError as exc:
            yield {"type": "ERROR", "object": exc.status()}
            return
        yield from initial
        yield from self._follow(cursor)

    def _start(self) -> tuple[int, list[JsonObject]]:
        request = self._request
        if self._faults.take_gone():
            raise gone(f"too old resource version: {request.resource_version} (injected)")
        if request.resource_version in ("", "0"):
            items, rv = self._store.select(
                request.rtype, request.namespace, request.labels, request.fields
            )
            return rv, [{"type": "ADDED", "object": o} for o in items]
        return int(request.resource_version), []

    def _follow(self, cursor: int) -> Iterator[JsonObject]:
        started = time.monotonic()
        timeout = self._request.timeout_seconds
        next_bookmark = started + self._bookmark_interval
        while not self._closed():
            if self._faults.stalled:
                self._faults.wait_unstalled(_POLL_SECONDS)
                continue
            try:
                events, cursor = self._store.events_since(self._request.rtype, cursor)
            except ApiError as exc:
                yield {"type": "ERROR", "object": exc.status()}
                return
            for event in events:
                translated = self._translate(event)
                if translated is not None:
                    yield translated
            now = time.monotonic()
            if timeout is not None and now - started >= timeout:
                if self._request.bookmarks:
                    yield self._bookmark(cursor)
                return
            if self._request.bookmarks and now >= next_bookmark:
                yield self._bookmark(cursor)
                next_bookmark = now + self._bookmark_interval
            wait = min(_POLL_SECONDS, next_bookmark - now)
            if timeout is not None:
                wait = min(wait, started + timeout - now)
            self._store.wait_for_change(cursor, max(0.0, wait))
