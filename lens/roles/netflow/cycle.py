"""One interval of `lens netflow`: the sockets' counters read, turned into per-socket
intervals, classified and added to the metrics. The backend is chosen once, at start
(netflow.backend): eBPF where it can run, else — with `auto` — the sock_diag fallback, the
reason eBPF cannot run logged once; with no backend at all /readyz and the backend metric say
why, and nothing is read."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from lens.netflow import accounting, diagflows, listeners, loader
from lens.netflow.classify import Classifier
from lens.netflow.flows import DeltaTracker
from lens.netflow.netflowmetrics import NetflowMetrics
from lens.netflow.sockets import Dropped, FlowBackend, IPAddress
from lens.runtime import errors
from lens.runtime.clock import Clock
from lens.runtime.config import NetflowConfig

log = logging.getLogger(__name__)

NamePeers = Callable[[frozenset[IPAddress], float], None]


class NetflowCycle:
    """The backend, the last readings and the metrics; `run()` is the loop's body."""

    name = "netflow-backend"

    def __init__(
        self,
        config: NetflowConfig,
        *,
        root: Path,
        classifier: Classifier,
        metrics: NetflowMetrics,
        clock: Clock,
        name_peers: NamePeers | None = None,
    ) -> None:
        """`name_peers` gets each interval's shown peers (netflow.peer_pods)."""
        self._config = config
        self._name_peers = name_peers
        self._root = root
        self._classifier = classifier
        self._metrics = metrics
        self._clock = clock
        self._backend: FlowBackend | None = None
        self._tracker = DeltaTracker()
        self._dropped = Dropped(flows_full=0, closed_full=0)
        self.unavailable: str | None = "the backend is loading"
        self._listeners_source = "sock_diag"
        self._listening: listeners.Listeners | None = None

    async def start(self) -> None:
        """Choose and load the backend (eBPF: seconds of clang), off the event loop."""
        try:
            self._backend = await asyncio.to_thread(self._load)
        except errors.SourceError as exc:
            self.unavailable = str(exc)
            self._metrics.backend.labels("none", "").set(1)
            log.error("lens netflow cannot read TCP flows here", extra={"reason": str(exc)})
            return
        self.unavailable = None
        backend = self._backend
        self._metrics.backend.labels(backend.name, backend.attachment).set(1)
        log.info(
            "lens netflow reads TCP flows",
            extra={"backend": backend.name, "attachment": backend.attachment},
        )

    def _load(self) -> FlowBackend:
        chosen = self._config.backend
        if chosen in ("auto", "ebpf"):
            try:
                flows = loader.EbpfFlows(
                    max_flows=self._config.max_flows, kernel_headers=self._config.kernel_headers
                )
            except loader.NetflowUnavailable as exc:
                if chosen == "ebpf":
                    raise
                log.warning(
                    "no eBPF: TCP flows sampled through sock_diag instead",
                    extra={"reason": str(exc)},
                )
            else:
                if flows.why_not_raw:
                    log.info(
                        "eBPF on ordinary tracepoints, which cost a connection more than raw ones",
                        extra={"reason": flows.why_not_raw},
                    )
                return flows
        return diagflows.SockDiagFlows(self._listeners_of_this_interval)

    async def stop(self) -> None:
        if self._backend is not None:
            await asyncio.to_thread(self._backend.close)
            self._backend = None

    def run(self) -> None:
        backend = self._backend
        if backend is None:
            return
        listening = self._listening = listeners.read_listeners(self._root)
        self._note_listeners_source(listening.source)
        deltas = self._tracker.advance(backend.read())
        flows = accounting.classify_all(deltas, self._classifier, listening)
        now = self._clock.time()
        shown = accounting.top_peers(flows, self._config.top_peers)
        self._metrics.record(flows, shown, now)
        if self._name_peers is not None:
            self._name_peers(shown, now)
        self._metrics.expire(now)
        self._metrics.tracked.set(self._tracker.tracked)
        self._count_dropped(backend.dropped())

    def _listeners_of_this_interval(self) -> listeners.Listeners:
        """The listeners run() read for this interval: the sock_diag backend's too, not a
        second reading."""
        if self._listening is None:
            self._listening = listeners.read_listeners(self._root)
        return self._listening

    def _note_listeners_source(self, source: str) -> None:
        """A change of where the listeners are read, logged once (the proc files cost a walk
        of every socket each interval)."""
        if source == self._listeners_source:
            return
        self._listeners_source = source
        if source == "sock_diag":
            log.info("listening sockets read through sock_diag again")
        else:
            log.warning("listening sockets read from the proc files", extra={"source": source})

    def use(self, classifier: Classifier) -> None:
        """Classify with `classifier` from the next interval on (the cluster's networks changed)."""
        self._classifier = classifier

    def ready(self) -> None:
        """The readiness check: raises while no backend reads flows."""
        if self.unavailable is not None:
            raise RuntimeError(self.unavailable)

    def _count_dropped(self, now: Dropped) -> None:
        for name, before, after in (
            ("flows", self._dropped.flows_full, now.flows_full),
            ("closed", self._dropped.closed_full, now.closed_full),
        ):
            if after > before:
                self._metrics.dropped.labels(name).inc(after - before)
        self._dropped = now
