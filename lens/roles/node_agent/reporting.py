"""The node agent's device reports: after each collection cycle, the GPUs' and RDMA ports' new
readings go to the per-minute summarisers (lens/reports), the minutes they close go to the
event stream, and so does the device inventory whenever it changes (docs/reports.md).

A collection is fed once, stamped with the time it was kept; a failed one feeds nothing, and
its minute says how many readings it missed. The inventory is made only from collections that
succeeded, so a failing collector never makes devices flap: its part is left unknown.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
from collections.abc import Callable, Iterable

from lens.containers.model import Container, ContainerEvent, EventType, Record
from lens.devices.gpu import Vendor
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import inventorywire, wire
from lens.reports.corrections import Lost, MinuteCorrector
from lens.reports.gpuminutes import GpuMinute, GpuMinuteSummariser
from lens.reports.inventory import DeviceInventory, GpuFacts, RdmaFacts, fill_unknown
from lens.reports.portminutes import PortMinute, PortMinuteSummariser
from lens.reports.samples import Holding
from lens.roles.node_agent import conversions
from lens.roles.node_agent.state import AgentState
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)

# How long the holdings of a container that ended are kept: longer than a minute stays open
# (its end plus 2.5 cycles), so the minute it ended in is still attributed when it closes.
ENDED_KEPT_SECONDS = 300.0
_VENDORS: tuple[Vendor, ...] = ("amd", "nvidia")
_ENDS = frozenset({EventType.EXITED, EventType.DELETED})


class ReportMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.minutes = metrics.counter(
            "lens_reports_minutes_total",
            "Per-minute device summaries put on the event stream, by device (gpu, rdma_port).",
            ("device",),
        )
        self.dropped = metrics.counter(
            "lens_reports_dropped_samples_total",
            "Device readings the summarisers dropped because they were no newer than the "
            "device's last (a clock stepped back, a duplicate).",
        )
        self.inventories = metrics.counter(
            "lens_reports_inventories_total",
            "Device inventories put on the event stream (at start and on each change).",
        )
        self.corrections = metrics.counter(
            "lens_reports_corrections_total",
            "GPU-minutes put on the event stream again, re-attributed, because a container "
            "holding the GPU in them was learnt of after they were sent.",
        )
        self.uncorrected = metrics.counter(
            "lens_reports_uncorrected_held_seconds_total",
            "GPU-seconds held by containers learnt of too late to correct the minutes they fell "
            "in (past the look-back): those minutes count the seconds as idle.",
        )


class HeldGpus:
    """Which containers held which GPU, ended containers kept for ENDED_KEPT_SECONDS.

    An end is taken from the container's exit or delete event (`told`) when there is one: a
    container that exits and is deleted between two cycles is gone from the live list before
    a cycle saw its exit, and the cycle's own time would overstate its hold by up to a cycle."""

    def __init__(self, containers: Callable[[], list[Container]] | None) -> None:
        self._containers = containers
        self._live: dict[str, Container] = {}
        self._ended: dict[str, tuple[float, list[Holding]]] = {}  # id -> (until, holdings)
        self._by_gpu: dict[str, list[Holding]] = {}
        self._ends: collections.deque[tuple[Container, float]] = collections.deque()

    def told(self, record: Record) -> None:
        """A record of container tracking (its thread): ends are kept for the next refresh."""
        if isinstance(record, ContainerEvent) and record.type in _ENDS and record.container.gpus:
            self._ends.append((record.container, record.time))

    def refresh(self, now: float) -> None:
        while self._ends:
            container, at = self._ends.popleft()
            if container.id not in self._ended:  # the first end told: the exit, if any
                self._end(container, at)
        live = {c.id: c for c in self._containers() if c.gpus} if self._containers else {}
        for cid, gone in self._live.items():
            if cid not in live and cid not in self._ended:
                self._end(gone, now)
        self._live = live
        for cid in [c for c, (until, _) in self._ended.items() if until < now - ENDED_KEPT_SECONDS]:
            del self._ended[cid]
        by_gpu: dict[str, list[Holding]] = {}
        every = [
            h for c in live.values() if c.id not in self._ended for h in conversions.holdings(c)
        ]
        every.extend(h for _, ended in self._ended.values() for h in ended)
        for holding in every:
            by_gpu.setdefault(holding.gpu_uuid, []).append(holding)
        self._by_gpu = by_gpu

    def _end(self, container: Container, at: float) -> None:
        ended = conversions.holdings(container, ended_at=at)
        self._ended[container.id] = (max((h.until or at) for h in ended), ended)

    def of(self, gpu_uuid: str) -> Iterable[Holding]:
        return self._by_gpu.get(gpu_uuid, ())


@dataclasses.dataclass(slots=True)
class _Sent:
    gpus: tuple[GpuFacts, ...] | None = None
    rdma: tuple[RdmaFacts, ...] | None = None


class DeviceReports:
    """Called after each collection cycle (`after_cycle`), in the cycle's thread."""

    def __init__(
        self,
        *,
        state: AgentState,
        present: Callable[[Vendor], bool],
        gpu_interval_seconds: float,
        rdma_interval_seconds: float,
        put: Callable[[pb.Record], None],
        containers: Callable[[], list[Container]] | None,
        metrics: ReportMetrics,
    ) -> None:
        self._state = state
        self._present = present
        self._put = put
        self._metrics = metrics
        self._held = HeldGpus(containers)
        self._gpus = GpuMinuteSummariser(
            interval_seconds=gpu_interval_seconds, holdings=self._held.of
        )
        self._corrector = MinuteCorrector()
        self._ports = PortMinuteSummariser(interval_seconds=rdma_interval_seconds)
        self._sampler = conversions.PortSampler()
        self._fed: dict[str, float] = {}  # collection -> the time of the one fed last
        self._sent = _Sent()
        self._dropped = 0

    def told(self, record: Record) -> None:
        """A record of container tracking as it is streamed (its thread)."""
        self._held.told(record)

    def after_cycle(self) -> None:
        now = self._state.time()
        self._held.refresh(now)
        gpu_minutes = [*self._feed_gpus(), *self._gpus.close(now)]
        port_minutes = [*self._feed_ports(), *self._ports.close(now)]
        if gpu_minutes:
            self._put(wire.gpu_minutes_record(gpu_minutes))
            self._metrics.minutes.labels("gpu").inc(len(gpu_minutes))
        self._correct(gpu_minutes, now)
        if port_minutes:
            self._put(wire.port_minutes_record(port_minutes))
            self._metrics.minutes.labels("rdma_port").inc(len(port_minutes))
        dropped = self._gpus.dropped_samples + self._ports.dropped_samples
        if dropped > self._dropped:
            self._metrics.dropped.inc(dropped - self._dropped)
            self._dropped = dropped
        self._report_inventory(now)

    def _correct(self, sent: list[GpuMinute], now: float) -> None:
        """Send again, whole, the minutes sent before a holder of theirs was learnt."""
        for minute in sent:
            # The holdings it was attributed from: only refresh changes them, before any close.
            self._corrector.closed(minute, self._held.of(minute.uuid))
        learnt = self._corrector.learn(self._held.of, now=now)
        if learnt.corrected:
            self._put(wire.gpu_minutes_record(learnt.corrected, correction=True))
            self._metrics.corrections.inc(len(learnt.corrected))
        if learnt.lost:
            self._report_lost(learnt.lost)

    def _report_lost(self, lost: tuple[Lost, ...]) -> None:
        """Counted, and logged once per container: a holder is new to a GPU only once (unless
        its container's devices change back and forth: its seconds are then counted again)."""
        by_container: dict[str, list[Lost]] = {}
        for item in lost:
            by_container.setdefault(item.holding.holder.container_id, []).append(item)
        for container_id, items in by_container.items():
            seconds = sum(item.seconds for item in items)
            self._metrics.uncorrected.inc(seconds)
            holder = items[0].holding.holder
            log.warning(
                "container learnt of too late to attribute all its GPU time",
                extra={
                    "container_id": container_id,
                    "pod": f"{holder.namespace}/{holder.pod_name}",
                    "gpus": sorted({item.holding.gpu_uuid for item in items}),
                    "unattributed_seconds": round(seconds, 3),
                    "look_back_seconds": self._corrector.look_back_seconds,
                },
            )

    def _new(self, name: str, at: float) -> bool:
        if self._fed.get(name) == at:
            return False
        self._fed[name] = at
        return True

    def _feed_gpus(self) -> list[GpuMinute]:
        closed: list[GpuMinute] = []
        for vendor in _VENDORS:
            observed = self._state.gpus[vendor].get()
            if observed is None or not observed.fresh or not self._new(vendor, observed.at):
                continue
            for gpu in observed.value.gpus:
                closed.extend(self._gpus.add(conversions.gpu_sample(gpu, observed.at)))
        return closed

    def _feed_ports(self) -> list[PortMinute]:
        observed = self._state.rdma.get()
        if observed is None or not observed.fresh or not self._new("rdma", observed.at):
            return []
        closed: list[PortMinute] = []
        for device in observed.value.devices:
            for port in device.ports:
                closed.extend(self._ports.add(self._sampler.sample(port, observed.at)))
        return closed

    def _report_inventory(self, now: float) -> None:
        gpus, rdma = self._gpu_inventory(), self._rdma_inventory()
        changed_gpus = gpus is not None and gpus != self._sent.gpus
        changed_rdma = rdma is not None and rdma != self._sent.rdma
        if not changed_gpus and not changed_rdma:
            return
        inventory = DeviceInventory(
            time=now, gpus=gpus if changed_gpus else None, rdma=rdma if changed_rdma else None
        )
        self._put(inventorywire.inventory_record(inventory))
        self._metrics.inventories.inc()
        if changed_gpus:
            self._sent.gpus = gpus
        if changed_rdma:
            self._sent.rdma = rdma

    def _gpu_inventory(self) -> tuple[GpuFacts, ...] | None:
        """Every GPU of the node, when each vendor present was read successfully; None else
        (also on a node with no GPU vendor at all: nothing was read)."""
        facts: list[GpuFacts] = []
        present = [v for v in _VENDORS if self._present(v)]
        for vendor in present:
            observed = self._state.gpus[vendor].get()
            if observed is None or not observed.fresh:
                return None
            facts.extend(conversions.gpu_facts(gpu) for gpu in observed.value.gpus)
        return tuple(facts) if present else None

    def _rdma_inventory(self) -> tuple[RdmaFacts, ...] | None:
        observed = self._state.rdma.get()
        if observed is None or not observed.fresh:
            return None
        sent = {facts.name: facts for facts in self._sent.rdma or ()}
        return tuple(
            fill_unknown(facts, sent.get(facts.name))
            for facts in map(conversions.rdma_facts, observed.value.devices)
        )
