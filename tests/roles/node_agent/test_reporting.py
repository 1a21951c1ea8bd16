"""Device reports after each collection cycle: minutes with the figures the devices showed and
the seconds each container held a GPU, and the inventory once at start and once per change,
never from a collection that failed."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from lens.containers.model import Container, ContainerEvent, Device, EventType, Pod, Source
from lens.devices.gpu import GpuCollection, GpuHealth, GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort, RdmaSnapshot
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import inventorywire, wire
from lens.reports.corrections import LOOK_BACK_MINUTES
from lens.reports.gpuminutes import GpuMinute
from lens.reports.inventory import DeviceInventory
from lens.roles.node_agent.reporting import ENDED_KEPT_SECONDS, DeviceReports, ReportMetrics
from lens.roles.node_agent.state import AgentState
from lens.runtime import wirevalues
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics

MINUTE = 1_700_000_040  # a whole UTC minute
WATTS = 300.0


def _gpu(index: int, *, at: float, busy: float, serial: str = "S0") -> GpuSnapshot:
    return GpuSnapshot(
        vendor="amd",
        index=index,
        pci_bus_id=f"0000:0{index}:00.0",
        card=f"card{index}",
        model="MI300X",
        serial=serial,
        uuid=f"GPU-{index}",
        utilization_ratio=busy,
        memory_used_bytes=2**30,
        power_watts=WATTS,
        energy_joules=1000.0 + WATTS * (at - MINUTE),
        temperatures_celsius=(("edge", 40.0 + index),),
        static=GpuStatic(pci_bus_id=f"0000:0{index}:00.0", vbios="113-X", vram_bytes=192 * 2**30),
    )


def _rdma(state: str = "ACTIVE", transmit: int = 0) -> RdmaSnapshot:
    port = RdmaPort(device="mlx5_0", port=1, state=state, transmit_bytes=transmit)
    return RdmaSnapshot(
        devices=(RdmaDevice(name="mlx5_0", index=0, ports=(port,)),), source="sysfs"
    )


def _holder(cid: str, created: float, gpu: int, **changes: object) -> Container:
    container = Container(
        id=cid,
        name="trainer",
        pod=Pod(uid=f"uid-{cid}", name=f"pod-{cid}", namespace="team-a"),
        devices=(Device(type="gpu", name="MI300X", number=gpu, uuid=f"GPU-{gpu}"),),
        created_at=created,
        status="Running",
    )
    return dataclasses.replace(container, **changes)  # type: ignore[arg-type]


@dataclasses.dataclass
class Node:
    clock: FakeClock
    state: AgentState
    reports: DeviceReports
    records: list[pb.Record]
    containers: list[Container]
    metrics: SelfMetrics

    def cycle(self, *, busy: float = 0.5, serial: str = "S0", gpu_ok: bool = True) -> None:
        now = self.clock.time()
        if gpu_ok:
            gpus = tuple(_gpu(i, at=now, busy=busy, serial=serial) for i in range(2))
            self.state.gpus["amd"].keep(GpuCollection(gpus))
        else:
            self.state.gpus["amd"].lose("amd-smi timed out")
        self.state.rdma.keep(_rdma(transmit=int(1000 * (now - MINUTE))))
        self.reports.after_cycle()
        self.clock.advance(1)

    def run_until(self, end: float, **kwargs: object) -> None:
        while self.clock.time() <= end:
            self.cycle(**kwargs)  # type: ignore[arg-type]

    def bodies(self, name: str) -> list[pb.Record]:
        return [r for r in self.records if r.WhichOneof("body") == name]

    def gpu_minutes(self) -> list[GpuMinute]:
        return [m for r in self.bodies("gpu_minutes") for m in wire.gpu_minutes(r)]

    def inventories(self) -> list[DeviceInventory]:
        found = []
        for record in self.bodies("devices"):
            wirevalues.set_time(record.observed_at, 0.0)
            found.append(inventorywire.device_inventory(record))
        return found


@pytest.fixture
def node() -> Node:
    clock = FakeClock(start_time=float(MINUTE))
    state = AgentState(clock.time)
    records: list[pb.Record] = []
    containers: list[Container] = []
    metrics = SelfMetrics(process=False)
    reports = DeviceReports(
        state=state,
        present=lambda vendor: vendor == "amd",
        gpu_interval_seconds=1.0,
        rdma_interval_seconds=1.0,
        put=records.append,
        containers=lambda: list(containers),
        metrics=ReportMetrics(metrics),
    )
    return Node(clock, state, reports, records, containers, metrics)


def test_a_minute_holds_the_gpus_figures_and_the_seconds_each_container_held_it(
    node: Node,
) -> None:
    node.containers.append(_holder("c1", MINUTE + 60 + 20, gpu=0))
    node.run_until(MINUTE + 120)
    second = [m for m in node.gpu_minutes() if m.start == MINUTE + 60]
    assert [m.uuid for m in second] == ["GPU-0", "GPU-1"]
    held, idle = second
    assert held.samples == 60 and held.expected_samples == 60
    assert held.utilization_mean_ratio == pytest.approx(0.5)
    assert held.power_mean_watts == pytest.approx(WATTS)
    assert held.energy_joules == pytest.approx(WATTS * 60)
    assert held.temperatures_max_celsius == (("edge", 40.0),)
    (share,) = held.held_by.shares
    assert (share.holder.pod_name, share.holder.namespace) == ("pod-c1", "team-a")
    assert share.seconds == pytest.approx(40) and held.held_by.idle_seconds == pytest.approx(20)
    assert idle.held_by.shares == () and idle.held_by.idle_seconds == pytest.approx(60)


def test_a_container_gone_before_its_minute_closed_is_still_attributed(node: Node) -> None:
    node.containers.append(_holder("c1", MINUTE - 600, gpu=1))
    node.run_until(MINUTE + 30)
    node.containers.clear()  # deleted without an exit time the agent saw
    node.run_until(MINUTE + 61)
    (first,) = [m for m in node.gpu_minutes() if m.start == MINUTE and m.uuid == "GPU-1"]
    (share,) = first.held_by.shares
    assert share.seconds == pytest.approx(31, abs=1.01)
    assert ENDED_KEPT_SECONDS > 60


def test_an_exit_told_by_its_event_ends_the_hold_at_its_own_time(node: Node) -> None:
    container = _holder("c1", MINUTE + 10, gpu=0)
    node.containers.append(container)
    node.run_until(MINUTE + 20)
    # Exited at +20.3 and deleted at once: gone from the list before a cycle saw it exit.
    exited = dataclasses.replace(container, status="Exit", exited_at=MINUTE + 20.3)
    node.containers.clear()
    node.reports.told(
        ContainerEvent(
            type=EventType.EXITED, source=Source.CONTAINERD, container=exited, time=MINUTE + 20.3
        )
    )
    node.reports.told(
        ContainerEvent(
            type=EventType.DELETED, source=Source.CONTAINERD, container=exited, time=MINUTE + 20.4
        )
    )
    node.run_until(MINUTE + 61)
    (first,) = [m for m in node.gpu_minutes() if m.start == MINUTE and m.uuid == "GPU-0"]
    (share,) = first.held_by.shares
    assert share.seconds == pytest.approx(10.3)


def test_a_failed_collection_feeds_nothing_and_the_minute_says_so(node: Node) -> None:
    node.run_until(MINUTE + 9)
    node.run_until(MINUTE + 19, gpu_ok=False)
    node.run_until(MINUTE + 60)
    first = [m for m in node.gpu_minutes() if m.start == MINUTE]
    assert {m.samples for m in first} == {50}
    assert {m.missing_samples for m in first} == {10}


def test_the_inventory_is_sent_at_start_and_once_per_change_and_never_from_a_failure(
    node: Node,
) -> None:
    node.run_until(MINUTE + 5)
    (first,) = node.inventories()
    assert first.gpus is not None and [g.uuid for g in first.gpus] == ["GPU-0", "GPU-1"]
    assert first.gpus[0].vbios == "113-X" and first.gpus[0].vram_bytes == 192 * 2**30
    assert first.rdma is not None and first.rdma[0].ports[0].state == "ACTIVE"
    node.run_until(MINUTE + 10, gpu_ok=False)  # failing: no inventory, nothing flaps
    node.run_until(MINUTE + 15)  # back, unchanged: nothing to send
    assert len(node.inventories()) == 1
    node.run_until(MINUTE + 20, serial="S1")
    second = node.inventories()[1]
    assert second.rdma is None  # unchanged parts are not sent again
    assert second.gpus is not None and {g.serial for g in second.gpus} == {"S1"}
    node.state.rdma.keep(_rdma(state="DOWN"))
    node.reports.after_cycle()
    third = node.inventories()[2]
    assert third.gpus is None
    assert third.rdma is not None and third.rdma[0].ports[0].state == "DOWN"


def test_a_change_of_a_gpus_health_is_sent_as_an_inventory(node: Node) -> None:
    node.run_until(MINUTE + 3)
    healthy = GpuHealth(state="healthy")
    judged = tuple(_gpu(i, at=MINUTE, busy=0.5).with_health(healthy) for i in range(2))
    node.state.gpus["amd"].keep(GpuCollection(judged))
    node.reports.after_cycle()
    failing = GpuHealth(state="unhealthy", reasons=("ecc_uncorrectable",))
    node.state.gpus["amd"].keep(GpuCollection((judged[0], judged[1].with_health(failing))))
    node.reports.after_cycle()
    node.state.gpus["amd"].keep(GpuCollection((judged[0], judged[1].with_health(failing))))
    node.reports.after_cycle()  # the same judgement again: nothing new to send
    sent = [[g.health for g in inventory.gpus or ()] for inventory in node.inventories()]
    assert sent == [
        [None, None],  # no judgement made (health off, or an agent from before it)
        ["healthy", "healthy"],
        ["healthy", "unhealthy: ecc_uncorrectable"],
    ]


def test_port_minutes_count_the_bytes_sent(node: Node) -> None:
    node.run_until(MINUTE + 121)
    minutes = [m for r in node.bodies("port_minutes") for m in wire.port_minutes(r)]
    second = [m for m in minutes if m.start == MINUTE + 60]
    assert [(m.device, m.port, m.transmit_bytes) for m in second] == [("mlx5_0", 1, 60_000)]


def _corrections(node: Node) -> list[pb.Record]:
    return [r for r in node.bodies("gpu_minutes") if wire.corrections(r)]


def test_a_container_learnt_late_has_the_minutes_sent_without_it_sent_again(node: Node) -> None:
    """Its pod-resources lookup failed: the agent lists it 70 s after it started."""
    container = _holder("c1", MINUTE + 40, gpu=1)
    node.run_until(MINUTE + 110)
    node.containers.append(container)
    node.run_until(MINUTE + 125)
    (record,) = _corrections(node)
    (corrected,) = wire.gpu_minutes(record)
    assert (corrected.start, corrected.uuid, corrected.samples) == (MINUTE, "GPU-1", 60)
    (share,) = corrected.held_by.shares
    assert (share.holder.pod_name, share.seconds) == ("pod-c1", pytest.approx(20))
    assert corrected.held_by.idle_seconds == pytest.approx(40)
    # The next minute closed after it was learnt: attributed as it was sent.
    (second,) = [m for m in node.gpu_minutes() if m.start == MINUTE + 60 and m.uuid == "GPU-1"]
    assert second.held_by.shares[0].seconds == pytest.approx(60)
    node.run_until(MINUTE + 200)
    assert len(_corrections(node)) == 1
    assert _sample(node, "lens_reports_corrections_total") == 1
    assert _sample(node, "lens_reports_uncorrected_held_seconds_total") == 0


def test_a_container_learnt_past_the_look_back_is_counted_and_logged_once(
    node: Node, caplog: pytest.LogCaptureFixture
) -> None:
    node.run_until(MINUTE + LOOK_BACK_MINUTES * 60 + 130)
    # Held GPU 0 from the agent's start for 75 s, learnt when its first two minutes had left
    # the look-back: 60 s of the first and 15 s of the second are lost, none corrected.
    node.containers.append(_holder("c1", MINUTE, gpu=0, exited_at=MINUTE + 75, status="Exit"))
    with caplog.at_level(logging.WARNING):
        node.run_until(MINUTE + LOOK_BACK_MINUTES * 60 + 200)
    assert _corrections(node) == []
    assert _sample(node, "lens_reports_uncorrected_held_seconds_total") == pytest.approx(75)
    (line,) = [r for r in caplog.records if r.name == "lens.roles.node_agent.reporting"]
    assert line.getMessage() == "container learnt of too late to attribute all its GPU time"
    assert (line.container_id, line.gpus) == ("c1", ["GPU-0"])  # type: ignore[attr-defined]


def _sample(node: Node, name: str) -> float | None:
    return node.metrics.registry.get_sample_value(name)
