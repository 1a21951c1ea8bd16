"""List then watch one kind of object into an ObjectCache, and hand every change to a handler.

The official client's list functions do the requests; the watch loop is ours because its
`Watch` retries a 410 with the same expired resourceVersion, fails on ERROR events when asked
for raw objects, and cannot tell a dead stream from a quiet one. Here:

- a list (paged) fills the cache; the watch starts from the list's resourceVersion, with
  bookmarks, and ends server-side after `watch_timeout_seconds`, when it is reopened from the
  last resourceVersion seen (events and bookmarks both move it);
- 410 Gone (the version left the server's history) means relist: the cache's difference to the
  listing is handed on, so objects deleted meanwhile come out as deletions;
- a stream that delivers neither an event nor a bookmark for `stall_seconds` is dead: it is
  dropped and reopened (the socket's read timeout);
- any other error backs off (with jitter) and reopens; after `relist_after_errors` failures in
  a row the next attempt relists.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

import urllib3
from kubernetes.client.exceptions import ApiException
from kubernetes.watch.watch import iter_resp_lines

from lens.kube.machinery import apierrors, resources
from lens.kube.machinery.cache import Change, ChangeType, ObjectCache, resource_version_of
from lens.runtime import errors
from lens.runtime.backoff import Backoff
from lens.runtime.config import KubeConfig

log = logging.getLogger(__name__)

ListFunc = Callable[..., Any]  # e.g. CoreV1Api.list_pod_for_all_namespaces
Handler = Callable[[list[Change]], None]
Listed = Callable[[], None]
Keep = Callable[[dict[str, Any]], dict[str, Any]]

_GONE = 410
_CHANGE_TYPES = {t.value for t in ChangeType}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WatchSettings:
    page_size: int = 500
    watch_timeout_seconds: int = 300  # the server ends a watch after this; reopened at once
    stall_seconds: float = 90.0  # no event and no bookmark for this long: the stream is dead
    connect_timeout_seconds: float = 10.0
    relist_after_errors: int = 3


def watch_settings(kube: KubeConfig) -> WatchSettings:
    """The watch settings the `kube` config section asks for."""
    return WatchSettings(
        page_size=kube.page_size,
        watch_timeout_seconds=kube.watch_timeout_seconds,
        stall_seconds=kube.stall_seconds,
        connect_timeout_seconds=min(10.0, kube.request_timeout_seconds),
    )


@dataclasses.dataclass(slots=True)
class ReflectorStats:
    """Counts for metrics and tests."""

    lists: int = 0
    relists_after_gone: int = 0
    watches: int = 0
    stalls: int = 0
    errors: int = 0
    events: int = 0
    bookmarks: int = 0


class _Gone(Exception):
    """The watched resourceVersion is no longer in the server's history."""


class Reflector:
    """Keeps `cache` current with one kind of object until `stop()`; `handle` gets the changes
    (in the reflector's thread, in order: a list's as one call, then one call per event)."""

    def __init__(
        self,
        *,
        name: str,
        list_func: ListFunc,
        args: tuple[Any, ...] = (),
        cache: ObjectCache,
        handle: Handler,
        settings: WatchSettings,
        backoff: Backoff | None = None,
        on_listed: Listed | None = None,
        keep: Keep | None = None,
    ) -> None:
        """`on_listed` runs after each full listing's changes were handed on (the cache then
        holds exactly what the server had): where deletions nobody saw can be settled. `keep`
        cuts each object down to what the handler reads before it is cached (as client-go's
        transform), for a cache of every pod on every node."""
        self.name = name
        self.cache = cache
        self.stats = ReflectorStats()
        self._list_func = list_func
        self._args = args
        self._handle = handle
        self._on_listed = on_listed
        self._keep = keep
        self._settings = settings
        self._backoff = backoff or Backoff(initial=0.2, maximum=30.0)
        self._stop = threading.Event()
        self._synced = threading.Event()
        # Set once listed or stopped, so a caller waiting for the listing is freed by stop().
        self._settled = threading.Event()
        self._response: urllib3.BaseHTTPResponse | None = None
        self.version = ""  # the last resourceVersion seen (listing, event or bookmark)
        self._thread: threading.Thread | None = None

    @property
    def synced(self) -> bool:
        """True once the first listing is in the cache."""
        return self._synced.is_set()

    @property
    def watching(self) -> bool:
        """True while a watch stream is open: changes arrive as they happen (False between
        a failure and the next stream, and for the moment a stream is reopened)."""
        return self._response is not None

    def wait_synced(self, timeout: float) -> bool:
        """Wait for the first listing, at most `timeout` seconds, or until stopped."""
        self._settled.wait(timeout)
        return self._synced.is_set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name=f"reflector-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._settled.set()
        response = self._response
        if response is not None:
            # The watch thread may have closed or released this response a moment ago (a
            # timed-out read closes the socket): then no read is blocked on it to wake.
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                response.shutdown()  # wakes a read blocked on the socket
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        version: str | None = None
        failures = 0
        while not self._stop.is_set():
            try:
                if version is None:
                    version = self.version = self._list()
                version = self._watch(version)
                failures = 0
                self._backoff.reset()
            except _Gone:
                self.stats.relists_after_gone += 1
                log.info("watch expired; relisting", extra={"kind": self.name})
                version = None
            except (ApiException, urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
                failures = self._failed(exc, failures)
                if failures >= self._settings.relist_after_errors:
                    version = None

    def _failed(self, exc: BaseException, failures: int) -> int:
        """Count and log a failure, then back off; the failures in a row so far."""
        if self._stop.is_set():
            return failures
        failures += 1
        self.stats.errors += 1
        if failures == 1:
            log.warning("watch failed; retrying", extra={"kind": self.name, "reason": _why(exc)})
        self._stop.wait(self._backoff.next_delay(exc))
        return failures

    def _list(self) -> str:
        """List every object (page by page) into the cache; the listing's resourceVersion."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"limit": self._settings.page_size}
            if token:
                kwargs["_continue"] = token
            page = self._call(**kwargs)
            items.extend(self._slim(item) for item in page.get("items") or [])
            metadata = page.get("metadata") or {}
            token = metadata.get("continue")
            if not token:
                version = str(metadata.get("resourceVersion") or "")
                break
        self.stats.lists += 1
        changes = self.cache.replace(items)
        if changes:
            self._handle(changes)
        if self._on_listed is not None:
            self._on_listed()
        self._synced.set()
        self._settled.set()
        return version

    def _open(self, **kwargs: Any) -> Any:
        """The list function's raw response. The client raises ApiException for any non-2xx
        answer even when asked for the raw response; 410 Gone (an expired version) is _Gone."""
        try:
            return self._list_func(*self._args, _preload_content=False, **kwargs)
        except ApiException as exc:
            if exc.status == _GONE:
                raise _Gone() from exc
            raise

    def _slim(self, obj: dict[str, Any]) -> dict[str, Any]:
        return as_cached(obj, self._keep)

    def _call(self, **kwargs: Any) -> dict[str, Any]:
        response = self._open(
            _request_timeout=(self._settings.connect_timeout_seconds, 60.0), **kwargs
        )
        return resources.read_json(response, f"{self.name} list")

    def _watch(self, version: str) -> str:
        """Follow one watch stream from `version`; the last version seen when it ends."""
        settings = self._settings
        response = self._open(
            watch=True,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=settings.watch_timeout_seconds,
            _request_timeout=(settings.connect_timeout_seconds, settings.stall_seconds),
        )
        self._response = response
        self.stats.watches += 1
        try:
            for line in iter_resp_lines(response):  # type: ignore[no-untyped-call]  # untyped upstream
                if self._stop.is_set():
                    break
                if line:
                    version = self.version = self._event(line, version)
        except urllib3.exceptions.ReadTimeoutError:
            self.stats.stalls += 1
            log.warning(
                "watch silent past its stall limit; reopening",
                extra={"kind": self.name, "seconds": settings.stall_seconds},
            )
        except urllib3.exceptions.ProtocolError as exc:
            if not _timed_out(exc):
                raise
            self.stats.stalls += 1
        finally:
            self._response = None
            response.release_conn()
        return version

    def _event(self, line: str, version: str) -> str:
        try:
            event = json.loads(line)
            kind, obj = event["type"], event["object"]
        except (ValueError, KeyError, TypeError) as exc:
            raise errors.SourceError(f"{self.name} watch sent a bad event: {exc}") from exc
        if kind == "BOOKMARK":
            self.stats.bookmarks += 1
            return resource_version_of(obj) or version
        if kind == "ERROR":
            if obj.get("code") == _GONE:
                raise _Gone()
            raise errors.SourceError(
                f"{self.name} watch error {obj.get('code')}: {obj.get('message', '')}"
            )
        if kind not in _CHANGE_TYPES:
            raise errors.SourceError(f"{self.name} watch sent an event of type {kind!r}")
        self.stats.events += 1
        change = self.cache.apply(ChangeType(kind), self._slim(obj))
        if change is not None:
            self._handle([change])
        return resource_version_of(obj) or version


def as_cached(obj: dict[str, Any], keep: Keep | None = None) -> dict[str, Any]:
    """The object as the cache keeps it: what `keep` keeps of it, without managedFields
    (server-side apply bookkeeping, often half of an object's size), its keys and short strings
    shared with every other cached object (each watch event is parsed on its own, so its keys
    would be copies)."""
    if keep is not None:
        obj = keep(obj)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    shared: dict[str, Any] = _shared(obj)
    return shared


_SHARED_MAX = 64  # longer strings (annotations, commands) are rarely repeated


def _shared(value: Any) -> Any:
    if isinstance(value, dict):
        return {sys.intern(k): _shared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v) for v in value]
    if isinstance(value, str) and len(value) <= _SHARED_MAX:
        return sys.intern(value)
    return value


def _timed_out(exc: urllib3.exceptions.ProtocolError) -> bool:
    """urllib3 reports a read timeout inside a chunked body as a ProtocolError."""
    cause = exc.__context__ or (exc.args[1] if len(exc.args) > 1 else None)
    return isinstance(cause, TimeoutError | urllib3.exceptions.ReadTimeoutError) or (
        "timed out" in str(exc)
    )


def _why(exc: BaseException) -> str:
    return apierrors.describe(exc)
