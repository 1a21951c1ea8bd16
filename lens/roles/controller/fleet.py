"""The clusters one controller keeps in the store, run only while this replica leads.

Leadership changes arrive from the elector's thread, which must keep renewing: the fleet's
own thread starts and stops the clusters' watches. Losing the lead stops every writer first.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

import kubernetes

from lens.kube.workloads.clustersync import ClusterSync

log = logging.getLogger(__name__)

SyncFactory = Callable[[str, kubernetes.client.ApiClient], ClusterSync]


@dataclasses.dataclass(frozen=True, slots=True)
class ClusterTarget:
    name: str
    api: kubernetes.client.ApiClient


class Fleet:
    def __init__(self, make_sync: SyncFactory) -> None:
        self._make_sync = make_sync
        self._targets: dict[str, ClusterTarget] = {}
        self._running: dict[str, ClusterSync] = {}
        self._leading = False
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    # -- what is wanted (any thread) ----------------------------------------------------

    def set_targets(self, targets: list[ClusterTarget]) -> None:
        with self._changed:
            self._targets = {t.name: t for t in targets}
            self._changed.notify()

    def lead(self) -> None:
        self._set_leading(True)

    def follow(self) -> None:
        self._set_leading(False)

    def _set_leading(self, leading: bool) -> None:
        with self._changed:
            self._leading = leading
            self._changed.notify()

    # -- what is running --------------------------------------------------------------

    @property
    def leading(self) -> bool:
        with self._changed:
            return self._leading

    def syncs(self) -> list[ClusterSync]:
        with self._changed:
            return list(self._running.values())

    def listed(self) -> bool:
        """Every running cluster's watches have listed (a follower has nothing to list)."""
        with self._changed:
            wanted = set(self._targets) if self._leading else set()
            running = dict(self._running)
        return set(running) == wanted and all(s.listed() for s in running.values())

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="fleet", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 30.0) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._closed or self._pending(), timeout=1.0)
                closed = self._closed
                wanted = {} if closed or not self._leading else dict(self._targets)
            self._converge(wanted)
            if closed:
                return

    def _pending(self) -> bool:
        wanted = set(self._targets) if self._leading else set()
        return wanted != set(self._running) or any(
            self._running[n].cluster_api is not self._targets[n].api
            for n in wanted & set(self._running)
        )

    def _converge(self, wanted: dict[str, ClusterTarget]) -> None:
        with self._changed:
            running = dict(self._running)
        for name, sync in running.items():
            target = wanted.get(name)
            if target is None or target.api is not sync.cluster_api:
                log.info("stopping cluster watches", extra={"cluster": name})
                sync.stop()
                with self._changed:
                    del self._running[name]
        for name, target in wanted.items():
            if name in self._running:
                continue
            log.info("starting cluster watches", extra={"cluster": name})
            sync = self._make_sync(name, target.api)
            with self._changed:
                self._running[name] = sync
            sync.start()
