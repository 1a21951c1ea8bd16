from __future__ import annotations

import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from lens.containers.model import ContainerEvent, EventType, Inventory, Record, Source
from lens.containers.node.records import (
    ContainerRecord,
    RuntimeEvent,
    RuntimeStatus,
    TaskRecord,
)
from lens.containers.node.tracking import ContainerTracker
from lens.devices.devnodes import NodeDevice

GPU = NodeDevice(type="gpu", name="MI300X", number=0, uuid="g0")
SPEC = json.dumps(
    {
        "linux": {
            "devices": [{"path": "/dev/dri/renderD128", "type": "c", "major": 226, "minor": 128}]
        }
    }
).encode()
LABELS = {
    "io.kubernetes.pod.name": "p",
    "io.kubernetes.pod.namespace": "ns",
    "io.kubernetes.pod.uid": "u",
    "io.kubernetes.container.name": "main",
}


class Runtime:
    """What containerd would answer: containers and tasks by id."""

    def __init__(self) -> None:
        self.containers: dict[str, ContainerRecord] = {}
        self.tasks: dict[str, TaskRecord] = {}

    def add(self, cid: str, *, spec: bytes = SPEC, labels: dict[str, str] = LABELS) -> None:
        self.containers[cid] = ContainerRecord(
            id=cid, labels=labels, image="img", spec=spec, created_at=10.0
        )

    def get_container(self, container_id: str) -> ContainerRecord | None:
        return self.containers.get(container_id)

    def list_containers(self) -> list[ContainerRecord]:
        return list(self.containers.values())

    def list_tasks(self) -> dict[str, TaskRecord]:
        return dict(self.tasks)


class CriRuntime(Runtime):
    """containerd with its CRI plugin, which keeps each container's status past its task."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: dict[str, RuntimeStatus] = {}

    def last_status(self, container_id: str) -> RuntimeStatus | None:
        return self.statuses.get(container_id)


def _tracker(source: Source = Source.CONTAINERD) -> tuple[ContainerTracker, list[Record]]:
    out: list[Record] = []
    table = {(226, 128): GPU}
    tracker = ContainerTracker(
        source=source, lookup=lambda a, b: table.get((a, b)), emit=out.append
    )
    return tracker, out


def _kinds(out: list[Record]) -> list[tuple[str, str]]:
    return [
        (r.type.value, r.container.status) if isinstance(r, ContainerEvent) else ("inventory", "")
        for r in out
    ]


def test_a_lifecycle_becomes_events_that_carry_pod_and_devices_to_the_end() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/containers/create", container_id="c1", time=10.1), runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=11.0), runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/oom", container_id="c1", time=12.0), runtime)
    # The same kill notified again (memory.events oom, then oom_kill): one OOMKilled.
    tracker.handle(RuntimeEvent(topic="/tasks/oom", container_id="c1", time=12.003), runtime)
    exit_ = RuntimeEvent(
        topic="/tasks/exit",
        container_id="c1",
        time=12.1,
        exec_id="c1",
        exit_status=137,
        exited_at=12.05,
    )
    tracker.handle(exit_, runtime)
    repeat = RuntimeEvent(
        topic="/tasks/delete", container_id="c1", time=12.2, exit_status=137, exited_at=12.05
    )
    tracker.handle(repeat, runtime)
    del runtime.containers["c1"]  # gone from containerd before its delete event is handled
    tracker.handle(RuntimeEvent(topic="/containers/delete", container_id="c1", time=13.0), runtime)
    assert _kinds(out) == [
        ("created", "Created"),
        ("started", "Running"),
        ("oom_killed", "OOMKilled"),
        ("exited", "Exit"),
        ("deleted", "Deleted"),
    ]
    deleted = out[-1]
    assert isinstance(deleted, ContainerEvent)
    assert deleted.container.pod is not None and deleted.container.pod.name == "p"
    assert deleted.container.devices[0].uuid == "g0"
    assert deleted.container.exit_code == 137
    assert [r.time for r in out if isinstance(r, ContainerEvent)] == [10.0, 11.0, 12.0, 12.05, 13.0]


def test_a_container_started_again_after_an_oom_kill_reports_its_next_kill() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    for topic, time in [("/tasks/start", 1.0), ("/tasks/oom", 2.0), ("/tasks/start", 3.0)]:
        tracker.handle(RuntimeEvent(topic=topic, container_id="c1", time=time), runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/oom", container_id="c1", time=4.0), runtime)
    assert [k for k, _ in _kinds(out)] == [
        "created",
        "started",
        "oom_killed",
        "started",
        "oom_killed",
    ]


def test_exec_processes_sandboxes_and_containers_without_devices_are_not_reported() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("plain", spec=b"{}")
    runtime.add("pause", labels={**LABELS, "io.cri-containerd.kind": "sandbox"})
    for cid in ("plain", "pause"):
        tracker.handle(RuntimeEvent(topic="/containers/create", container_id=cid, time=1), runtime)
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/containers/create", container_id="c1", time=1), runtime)
    exec_exit = RuntimeEvent(
        topic="/tasks/exit", container_id="c1", time=2, exec_id="exec-1", exit_status=1
    )
    tracker.handle(exec_exit, runtime)
    assert _kinds(out) == [("created", "Created")]
    assert [c.id for c in tracker.containers()] == ["c1"]


def test_a_resync_reports_what_the_stream_missed_with_the_runtimes_own_times() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("running")
    runtime.tasks["running"] = TaskRecord(
        container_id="running", status="running", pid=5, exit_status=None, exited_at=None
    )
    runtime.add("stopped")
    runtime.tasks["stopped"] = TaskRecord(
        container_id="stopped", status="stopped", pid=6, exit_status=2, exited_at=20.0
    )
    tracker.resync(runtime, now=30.0)
    assert _kinds(out) == [
        ("created", "Running"),
        ("observed", "Running"),
        ("created", "Exit"),
        ("observed", "Exit"),
        ("exited", "Exit"),
        ("inventory", ""),
    ]
    out.clear()
    del runtime.containers["stopped"]
    tracker.resync(runtime, now=40.0)  # nothing new but the deletion
    assert _kinds(out) == [("deleted", "Deleted"), ("inventory", "")]
    inventory = out[-1]
    assert isinstance(inventory, Inventory) and inventory.container_ids == ("running",)
    assert [e.type for e in out if isinstance(e, ContainerEvent)] == [EventType.DELETED]


def test_the_kubelets_allocation_overrides_the_spec_and_a_change_is_reported() -> None:
    gpu1 = NodeDevice(type="gpu", name="MI300X", number=1, uuid="g1")
    gpu2 = NodeDevice(type="gpu", name="MI300X", number=2, uuid="g2")
    given: dict[tuple[str, str], list[NodeDevice]] = {("p", "main"): [gpu1]}
    out: list[Record] = []
    table = {(226, 128): GPU}
    tracker = ContainerTracker(
        source=Source.CONTAINERD,
        lookup=lambda a, b: table.get((a, b)),
        emit=out.append,
        allocated=lambda pod, name: given.get((pod.name, name), []),
    )
    runtime = Runtime()
    runtime.add("c1")  # its spec names GPU 0's render node
    runtime.add("nvidia-like", spec=b"{}")  # no device nodes in its spec at all
    given[("p", "main")] = [gpu1]
    tracker.resync(runtime, now=20.0)
    gpus = {c.id: [d.number for d in c.devices] for c in tracker.containers()}
    assert gpus == {"c1": [1], "nvidia-like": [1]}
    given[("p", "main")] = [gpu2]  # reallocated: the next listing reports the new devices
    out.clear()
    tracker.resync(runtime, now=30.0)
    observed = [r for r in out if isinstance(r, ContainerEvent)]
    assert [(r.type, r.container.id, r.container.devices[0].number) for r in observed] == [
        (EventType.OBSERVED, "c1", 2),
        (EventType.OBSERVED, "nvidia-like", 2),
    ]


def test_an_oom_kill_told_after_the_exit_keeps_the_exit_status() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=1.0), runtime)
    exit_ = RuntimeEvent(topic="/tasks/exit", container_id="c1", time=2.0, exit_status=137)
    tracker.handle(exit_, runtime)
    for time in (2.1, 2.2):
        tracker.handle(RuntimeEvent(topic="/tasks/oom", container_id="c1", time=time), runtime)
    assert _kinds(out) == [
        ("created", "Created"),
        ("started", "Running"),
        ("exited", "Exit"),
        ("oom_killed", "Exit"),
    ]


class CreatedDuringAResync(Runtime):
    """A container created (and its event handled on another thread) while a resync lists."""

    def __init__(self, tracker: ContainerTracker) -> None:
        super().__init__()
        self.tracker = tracker
        self.handler: threading.Thread | None = None
        self.handler_read = threading.Event()

    def list_tasks(self) -> dict[str, TaskRecord]:
        self.add("late")
        created = RuntimeEvent(topic="/containers/create", container_id="late", time=11.0)
        self.handler = threading.Thread(target=self.tracker.handle, args=(created, self))
        self.handler.start()
        return super().list_tasks()

    def get_container(self, container_id: str) -> ContainerRecord | None:
        self.handler_read.set()
        return super().get_container(container_id)


def test_a_creation_handled_during_a_resync_is_told_after_the_inventory_that_lacks_it() -> None:
    out: list[Record] = []
    table = {(226, 128): GPU}

    def emit(record: Record) -> None:
        if isinstance(record, Inventory):
            # Give the handler its chance to tell of "late" before the inventory is told.
            runtime.handler_read.wait(timeout=1.0)
        out.append(record)

    tracker = ContainerTracker(
        source=Source.CONTAINERD, lookup=lambda a, b: table.get((a, b)), emit=emit
    )
    runtime = CreatedDuringAResync(tracker)
    tracker.resync(runtime, now=10.5)
    assert runtime.handler is not None
    runtime.handler.join()
    kinds = [("inventory", r.container_ids) if isinstance(r, Inventory) else r.type for r in out]
    assert kinds == [("inventory", ()), EventType.CREATED]


def _events(out: list[Record]) -> list[ContainerEvent]:
    return [r for r in out if isinstance(r, ContainerEvent)]


def test_a_task_deleted_right_after_its_exit_keeps_the_exit_status() -> None:
    """The CRI plugin deletes a task right after it exits: the next listing finds the container
    with no task, which is no reason to call it Created again (issue 16, point 1)."""
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    runtime.tasks["c1"] = TaskRecord(
        container_id="c1", status="running", pid=7, exit_status=None, exited_at=None
    )
    tracker.resync(runtime, now=11.0)
    exit_ = RuntimeEvent(
        topic="/tasks/exit", container_id="c1", time=12.1, exit_status=3, exited_at=12.0
    )
    tracker.handle(exit_, runtime)
    del runtime.tasks["c1"]
    tracker.handle(
        RuntimeEvent(
            topic="/tasks/delete", container_id="c1", time=12.2, exit_status=3, exited_at=12.0
        ),
        runtime,
    )
    out.clear()
    tracker.resync(runtime, now=13.0)
    assert _kinds(out) == [("inventory", "")]
    (container,) = tracker.containers()
    assert (container.status, container.exit_code, container.exited_at) == ("Exit", 3, 12.0)


def test_a_container_whose_exit_went_unseen_is_exited_with_its_code_unknown() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    runtime.tasks["c1"] = TaskRecord(
        container_id="c1", status="running", pid=7, exit_status=None, exited_at=None
    )
    tracker.resync(runtime, now=11.0)
    del runtime.tasks["c1"]  # exited and deleted while the stream was down
    out.clear()
    tracker.resync(runtime, now=20.0)
    assert not any(e.type is EventType.EXITED for e in _events(out)), "its exit may be on its way"
    tracker.resync(runtime, now=80.0)
    exited = [e for e in _events(out) if e.type is EventType.EXITED]
    assert len(exited) == 1 and exited[0].exit_code is None
    assert exited[0].container.status == "Exit" and exited[0].time == 20.0, "first seen gone"
    assert all(e.container.status != "Created" for e in _events(out))


def test_an_exit_told_after_a_listing_found_the_task_gone_is_told_once_with_its_code() -> None:
    """The task is deleted right after the exit; a listing between the two, while the exit
    event is still on its way, must not tell an exit of its own (it was told twice, the
    inferred one without a code: seen under load in tests/roles/node_agent/test_tracking.py)."""
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    runtime.tasks["c1"] = TaskRecord(
        container_id="c1", status="running", pid=7, exit_status=None, exited_at=None
    )
    tracker.resync(runtime, now=11.0)
    del runtime.tasks["c1"]
    tracker.resync(runtime, now=12.0)
    tracker.handle(
        RuntimeEvent(
            topic="/tasks/exit", container_id="c1", time=12.1, exit_status=137, exited_at=11.9
        ),
        runtime,
    )
    tracker.resync(runtime, now=72.0)
    exited = [e for e in _events(out) if e.type is EventType.EXITED]
    assert [(e.time, e.exit_code) for e in exited] == [(11.9, 137)]


def test_an_exit_without_a_status_leaves_the_code_unknown() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=11.0), runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/exit", container_id="c1", time=12.0), runtime)
    exited = [e for e in _events(out) if e.type is EventType.EXITED]
    assert len(exited) == 1 and exited[0].exit_code is None


def test_a_fast_container_is_stamped_running_before_exited() -> None:
    """containerd stamps /tasks/start when it publishes it, which for a container that exits at
    once is after the process's exit time (issue 16, point 2)."""
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=12.003), runtime)
    tracker.handle(
        RuntimeEvent(
            topic="/tasks/exit", container_id="c1", time=12.004, exit_status=0, exited_at=12.001
        ),
        runtime,
    )
    # A start told late, after the exit it preceded, changes nothing.
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=12.0), runtime)
    told = [(e.type, e.time) for e in _events(out) if e.type is not EventType.CREATED]
    assert told == [(EventType.STARTED, 12.003), (EventType.EXITED, 12.003001)]
    (container,) = tracker.containers()
    assert (container.status, container.exited_at) == ("Exit", 12.001)


def test_a_docker_restart_after_an_exit_is_running_again() -> None:
    runtime, (tracker, out) = Runtime(), _tracker(Source.DOCKER)
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=11.0), runtime)
    tracker.handle(
        RuntimeEvent(topic="/tasks/exit", container_id="c1", time=12.0, exit_status=1), runtime
    )
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=13.0), runtime)
    assert tracker.containers()[0].status == "Running"
    assert [e.type for e in _events(out)][-1] is EventType.STARTED


def test_a_start_told_after_the_exit_it_preceded_is_dropped_whatever_its_time() -> None:
    """containerd stamps /tasks/start when it publishes it, after the exit time of a container
    that ends at once, and may deliver it after /tasks/exit (issue 16, point 2)."""
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/containers/create", container_id="c1", time=10.0), runtime)
    exit_ = RuntimeEvent(
        topic="/tasks/exit", container_id="c1", time=12.004, exit_status=0, exited_at=12.001
    )
    tracker.handle(exit_, runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=12.003), runtime)
    assert _kinds(out) == [("created", "Created"), ("exited", "Exit")]
    (container,) = tracker.containers()
    assert (container.status, container.exit_code) == ("Exit", 0)


def test_a_containerd_container_runs_again_only_in_a_new_task() -> None:
    runtime, (tracker, out) = Runtime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=11.0), runtime)
    tracker.handle(
        RuntimeEvent(topic="/tasks/exit", container_id="c1", time=12.0, exit_status=1), runtime
    )
    tracker.handle(RuntimeEvent(topic="/tasks/create", container_id="c1", time=13.0), runtime)
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=13.1), runtime)
    (container,) = tracker.containers()
    assert (container.status, container.exit_code, container.exited_at) == ("Running", None, None)
    tracker.handle(
        RuntimeEvent(topic="/tasks/exit", container_id="c1", time=14.0, exit_status=2), runtime
    )
    exits = [(e.time, e.exit_code) for e in _events(out) if e.type is EventType.EXITED]
    assert exits == [(12.0, 1), (14.0, 2)]


def _listed_without_task(runtime: Runtime, now: float) -> tuple[list[Record], ContainerTracker]:
    """A fresh tracker (an agent just restarted) listing c1, whose task is gone."""
    tracker, out = _tracker()
    runtime.add("c1")
    tracker.resync(runtime, now=now)
    return out, tracker


def test_an_agent_that_was_down_takes_the_exit_from_the_cri_plugins_status() -> None:
    """The exit happened while the agent was down and CRI deleted the task: CRI still has the
    code and time, the very ones /tasks/exit told (issue 16, point 1)."""
    runtime = CriRuntime()
    runtime.statuses["c1"] = RuntimeStatus(state="exited", exit_code=3, finished_at=12.5)
    out, tracker = _listed_without_task(runtime, 20.0)
    exited = [e for e in _events(out) if e.type is EventType.EXITED]
    assert [(e.time, e.exit_code, e.container.status) for e in exited] == [(12.5, 3, "Exit")]
    assert all(e.container.status == "Exit" for e in _events(out))
    # The exit told late by the stream is the same one: nothing more.
    out.clear()
    tracker.handle(
        RuntimeEvent(
            topic="/tasks/exit", container_id="c1", time=12.6, exit_status=3, exited_at=12.5
        ),
        runtime,
    )
    assert out == []


def test_cri_tells_a_container_only_created_and_one_whose_exit_is_on_its_way() -> None:
    runtime = CriRuntime()
    runtime.statuses["c1"] = RuntimeStatus(state="created", exit_code=None, finished_at=None)
    out, _ = _listed_without_task(runtime, 20.0)
    assert {e.container.status for e in _events(out)} == {"Created"}
    runtime.statuses["c1"] = RuntimeStatus(state="running", exit_code=None, finished_at=None)
    out, _ = _listed_without_task(runtime, 20.0)
    assert {e.container.status for e in _events(out)} == {"Running"}


def test_an_agent_that_was_down_without_cri_records_an_exit_with_its_code_unknown() -> None:
    for runtime in (Runtime(), CriRuntime()):  # no CRI at all, or CRI does not know it
        out, _ = _listed_without_task(runtime, 20.0)
        statuses = {e.container.status for e in _events(out)}
        exited = [e for e in _events(out) if e.type is EventType.EXITED]
        assert statuses == {"Exit"} and [(e.time, e.exit_code) for e in exited] == [(20.0, None)]


def test_a_listing_exit_of_a_fast_container_is_stamped_after_its_start() -> None:
    runtime, (tracker, out) = CriRuntime(), _tracker()
    runtime.add("c1")
    tracker.handle(RuntimeEvent(topic="/tasks/start", container_id="c1", time=12.003), runtime)
    runtime.statuses["c1"] = RuntimeStatus(state="exited", exit_code=0, finished_at=12.001)
    tracker.resync(runtime, now=13.0)
    exited = [e for e in _events(out) if e.type is EventType.EXITED]
    assert [(e.time, e.exit_code) for e in exited] == [(12.003001, 0)]


_RANK = {"Created": 0, "Running": 1, "OOMKilled": 2, "Exit": 3, "Deleted": 4}
# One CRI-style lifecycle as containerd tells it: the task is deleted right after its exit, and
# /tasks/start is stamped when published, after the exit time of a container that ends at once.
_LIFECYCLE = [
    RuntimeEvent(topic="/containers/create", container_id="c1", time=10.0),
    RuntimeEvent(topic="/tasks/create", container_id="c1", time=10.5, pid=7),
    RuntimeEvent(topic="/tasks/start", container_id="c1", time=11.2, pid=7),
    RuntimeEvent(
        topic="/tasks/exit", container_id="c1", time=11.3, pid=7, exit_status=4, exited_at=11.1
    ),
    RuntimeEvent(
        topic="/tasks/delete", container_id="c1", time=11.4, pid=7, exit_status=4, exited_at=11.1
    ),
]


def _as_after(runtime: CriRuntime, happened: int) -> None:
    """The runtime as it is once the first `happened` events of _LIFECYCLE took place."""
    runtime.containers.clear()
    runtime.tasks.clear()
    runtime.statuses.clear()
    if happened == 0:
        return
    runtime.add("c1")
    cri = {3: "running", 4: "running", 5: "exited"}.get(happened, "created")
    exited = cri == "exited"
    runtime.statuses["c1"] = RuntimeStatus(
        state=cri, exit_code=4 if exited else None, finished_at=11.1 if exited else None
    )
    if happened in (2, 3, 4):
        status = {2: "created", 3: "running", 4: "stopped"}[happened]
        runtime.tasks["c1"] = TaskRecord(
            container_id="c1",
            status=status,
            pid=7,
            exit_status=4 if happened == 4 else None,
            exited_at=11.1 if happened == 4 else None,
        )


@given(data=st.data())
def test_told_events_follow_the_lifecycle_whatever_order_they_arrive_in(
    data: st.DataObject,
) -> None:
    """Issue 16, point 2: whatever order containerd's events arrive in, with a listing between
    them (which sees the runtime as it is, events told or not), the statuses told never step
    back, the exit keeps its code, and a Running is stamped before the exit."""
    happened = data.draw(st.integers(0, len(_LIFECYCLE)), label="happened before the listing")
    before = data.draw(st.permutations(range(happened)), label="delivered in that order")
    told_before = before[: data.draw(st.integers(0, happened), label="told before the listing")]
    rest = [i for i in range(len(_LIFECYCLE)) if i not in told_before]
    after = data.draw(st.permutations(rest), label="told after the listing")
    runtime, (tracker, out) = CriRuntime(), _tracker()
    _as_after(runtime, len(_LIFECYCLE))
    for index in told_before:
        tracker.handle(_LIFECYCLE[index], runtime)
    _as_after(runtime, happened)
    tracker.resync(runtime, now=20.0)
    _as_after(runtime, len(_LIFECYCLE))
    for index in after:
        tracker.handle(_LIFECYCLE[index], runtime)
    tracker.resync(runtime, now=21.0)
    _as_after(runtime, 0)
    tracker.resync(runtime, now=22.0)
    told = [e for e in _events(out) if e.type is not EventType.OBSERVED]
    ranks = [_RANK[e.container.status] for e in told]
    assert ranks == sorted(ranks)
    assert [e.exit_code for e in told if e.type is EventType.EXITED] == [4]
    assert told[-1].type is EventType.DELETED and told[-1].container.exit_code == 4
    times = {e.type: e.time for e in told}
    if EventType.STARTED in times:
        assert times[EventType.STARTED] < times[EventType.EXITED]
