"""The containerd boundary against a real containerd (private socket, tests/conftest.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.protobuf import any_pb2, timestamp_pb2
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from lens.containers.node import containerd as boundary
from lens.containers.node import spec
from lens.containers.node.records import ContainerRecord, RuntimeEvent, RuntimeStatus
from lens.containers.node.watching import MALFORMED, Skipped
from lens.proto._generated.containerd.events import container_pb2, task_pb2
from lens.proto._generated.containerd.services.events.v1 import events_pb2
from lens.proto._generated.containerd.types.task import task_pb2 as task_types_pb2
from lens.proto._generated.cri.runtime.v1 import api_pb2 as cri_pb2
from lens.runtime import errors
from lens.sim.containerd import CriPods, PrivateContainerd, pod_labels

pytestmark = pytest.mark.slow_timeout


def _client(ctd: PrivateContainerd) -> boundary.ContainerdClient:
    return boundary.ContainerdClient(ctd.socket, namespace="k8s.io", timeout_seconds=5)


def test_events_of_a_container_that_runs_out_of_memory(
    containerd: PrivateContainerd, device_nodes: dict[str, Path]
) -> None:
    client = _client(containerd)
    events: list[RuntimeEvent] = []
    records: list[ContainerRecord | None] = []
    subscription = client.subscribe()

    def follow() -> None:
        for event in subscription:
            if not isinstance(event, RuntimeEvent) or event.container_id != "oom-1":
                continue
            events.append(event)
            if event.topic == "/containers/create":
                records.append(client.get_container("oom-1"))
            if event.topic == "/containers/delete":
                return

    follower = threading.Thread(target=follow)
    follower.start()
    labels = pod_labels(pod="p", namespace="ns", uid="u", container="main")
    # The stream is open once it delivers; a first container makes sure of it.
    containerd.run(
        "oom-1",
        ["sh", "-c", "tail /dev/zero"],
        labels=labels,
        devices=[device_nodes["render"]],
        memory_limit=16 << 20,
    )
    follower.join(20)
    subscription.cancel()
    client.close()
    topics = [e.topic for e in events]
    # One kill may be notified more than once (each change of the cgroup's memory.events).
    assert [t for i, t in enumerate(topics) if i == 0 or t != topics[i - 1]] == [
        "/containers/create",
        "/tasks/create",
        "/tasks/start",
        "/tasks/oom",
        "/tasks/exit",
        "/tasks/delete",
        "/containers/delete",
    ]
    exit_, delete = (events[topics.index(t)] for t in ("/tasks/exit", "/tasks/delete"))
    assert (exit_.exit_status, exit_.exec_id) == (137, "oom-1")
    assert exit_.exited_at is not None and exit_.exited_at == delete.exited_at
    (record,) = records
    assert record is not None and record.labels["io.kubernetes.container.name"] == "main"
    assert [(d.major, d.minor) for d in spec.parse_spec_devices(record.spec)] == [(226, 128)]


def test_listing_shows_a_running_container_and_its_task(containerd: PrivateContainerd) -> None:
    client = _client(containerd)
    assert containerd.run("listed-1", ["sleep", "60"], detach=True).returncode == 0
    try:
        (record,) = [c for c in client.list_containers() if c.id == "listed-1"]
        assert record.created_at > 0 and record.image
        task = client.list_tasks()["listed-1"]
        assert (task.status, task.exited_at) == ("running", None) and task.pid > 0
        assert client.get_container("no-such-container") is None
    finally:
        containerd.kill_and_delete("listed-1")
        client.close()


def test_an_unreachable_containerd_is_a_source_error(tmp_path: Path) -> None:
    client = boundary.ContainerdClient(
        str(tmp_path / "none.sock"), namespace="k8s.io", timeout_seconds=0.5
    )
    with pytest.raises(errors.SourceError, match="containerd list containers: UNAVAILABLE"):
        client.list_containers()
    with pytest.raises(errors.SourceError, match="event stream"):
        list(client.subscribe())
    client.close()


def test_the_cri_plugin_keeps_the_exit_that_the_event_stream_told(
    cri_containerd: PrivateContainerd, eventually: Callable[..., None]
) -> None:
    """After CRI deleted the task, its status still has the exit: the same code and time as
    /tasks/exit, so an agent that missed the event records the very same exit."""
    client, pods = _client(cri_containerd), CriPods(cri_containerd)
    subscription = client.subscribe()
    exits: list[RuntimeEvent] = []

    def follow() -> None:
        for event in subscription:
            if isinstance(event, RuntimeEvent) and event.topic == "/tasks/exit" and event.pid:
                exits.append(event)

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        pod = pods.run_pod(name="p", namespace="ns", uid="u-exit")
        cid = pods.start_container(pod, "main", ["sh", "-c", "exit 3"])
        eventually(lambda: [e for e in exits if e.container_id == cid], timeout=10)
        # CRI deletes the task, then records the exit: until it has, the status says running.
        eventually(lambda: cid not in client.list_tasks(), timeout=10)
        eventually(lambda: _state(client, cid) == "exited", timeout=10)
        (told,) = [e for e in exits if e.container_id == cid]
        status = client.last_status(cid)
        assert status == RuntimeStatus(state="exited", exit_code=3, finished_at=told.exited_at)
        assert client.last_status("no-such-container") is None
        # A container made without CRI (ctr, in the same namespace) is none of CRI's.
        assert cri_containerd.run("plain-1", ["true"], remove=False).returncode == 0
        assert client.last_status("plain-1") is None
        cri_containerd.ctr("containers", "delete", "plain-1")
    finally:
        subscription.cancel()
        follower.join(10)
        pods.close()
        client.close()


def _state(client: boundary.ContainerdClient, container_id: str) -> str | None:
    status = client.last_status(container_id)
    return None if status is None else status.state


def test_without_a_cri_plugin_no_status_is_known(containerd: PrivateContainerd) -> None:
    client = _client(containerd)
    try:
        assert containerd.run("plain-2", ["true"], remove=False).returncode == 0
        assert client.last_status("plain-2") is None
        assert client.last_status("plain-2") is None  # asked again: still none, no error
    finally:
        containerd.ctr("containers", "delete", "plain-2", check=False)
        client.close()


class _Call:
    """The envelopes of a Subscribe call, as grpc hands them over; then the stream ends."""

    def __init__(self, envelopes: list[events_pb2.Envelope]) -> None:
        self._envelopes = envelopes

    def __iter__(self) -> Iterator[events_pb2.Envelope]:
        return iter(self._envelopes)

    def cancel(self) -> None:
        self._envelopes = []


def _envelope(topic: str, message: Message) -> events_pb2.Envelope:
    packed = any_pb2.Any(type_url=message.DESCRIPTOR.full_name, value=message.SerializeToString())
    stamp = timestamp_pb2.Timestamp(seconds=1_800_000_000, nanos=5)
    return events_pb2.Envelope(timestamp=stamp, namespace="k8s.io", topic=topic, event=packed)


def test_an_unreadable_event_is_skipped_and_the_stream_goes_on() -> None:
    bad = _envelope("/tasks/exit", task_pb2.TaskStart(container_id="c1"))
    good = _envelope("/tasks/start", task_pb2.TaskStart(container_id="c1", pid=9))
    told: list[RuntimeEvent | Skipped] = []
    with pytest.raises(errors.SourceError, match="closed the event stream"):
        told.extend(boundary.Subscription(_Call([bad, good])))
    assert isinstance(told[0], Skipped) and told[0].reason == MALFORMED
    assert "TaskStart" in told[0].detail
    assert told[1] == RuntimeEvent(
        topic="/tasks/start", container_id="c1", time=1_800_000_000.000000005, pid=9
    )


def test_cri_nanoseconds_become_the_seconds_of_the_timestamp_they_came_from() -> None:
    stamp = timestamp_pb2.Timestamp(seconds=1_795_541_628, nanos=454_748_520)
    assert boundary.nanoseconds(1_795_541_628_454_748_520) == boundary.seconds(stamp)
    assert boundary.nanoseconds(0) is None and boundary.nanoseconds(-5) is None


# --- property-based: whatever containerd (or a stranger on its socket) sends -------------------

_TEXT = st.text(max_size=40)
_U32 = st.integers(0, 2**32 - 1)
_STAMPS = st.builds(
    timestamp_pb2.Timestamp,
    seconds=st.integers(-(2**62), 2**62),
    nanos=st.integers(-(10**9) + 1, 10**9 - 1),
)
_MESSAGES = st.one_of(
    st.builds(container_pb2.ContainerCreate, id=_TEXT, image=_TEXT),
    st.builds(container_pb2.ContainerDelete, id=_TEXT),
    st.builds(task_pb2.TaskCreate, container_id=_TEXT, bundle=_TEXT, pid=_U32),
    st.builds(task_pb2.TaskStart, container_id=_TEXT, pid=_U32),
    st.builds(
        task_pb2.TaskExit,
        container_id=_TEXT,
        id=_TEXT,
        pid=_U32,
        exit_status=_U32,
        exited_at=_STAMPS,
    ),
    st.builds(
        task_pb2.TaskDelete,
        container_id=_TEXT,
        id=_TEXT,
        pid=_U32,
        exit_status=_U32,
        exited_at=_STAMPS,
    ),
    st.builds(task_pb2.TaskOOM, container_id=_TEXT),
)
_TOPICS = st.one_of(st.sampled_from(sorted(boundary.TOPIC_MESSAGES)), _TEXT)


@given(
    topic=_TOPICS,
    message=_MESSAGES,
    type_url=st.one_of(st.none(), _TEXT),
    prefix=st.sampled_from(["", "type.googleapis.com/", "containerd/"]),
    value=st.one_of(st.none(), st.binary(max_size=64)),
    stamp=_STAMPS,
)
def test_any_envelope_is_an_event_none_or_a_source_error(
    topic: str,
    message: Message,
    type_url: str | None,
    prefix: str,
    value: bytes | None,
    stamp: timestamp_pb2.Timestamp,
) -> None:
    """Any topic, type URL, payload (a message of any type, or bytes) and time: the envelope is
    an event, None (a topic not acted on) or a SourceError, never another exception."""
    envelope = _envelope(topic, message)
    envelope.timestamp.CopyFrom(stamp)
    envelope.event.type_url = prefix + (type_url or message.DESCRIPTOR.full_name)
    if value is not None:
        envelope.event.value = value
    try:
        event = boundary.parse_envelope(envelope)
    except errors.SourceError:
        return
    if event is None:
        assert topic not in boundary.TOPIC_MESSAGES
        return
    assert event.topic == topic and isinstance(event.container_id, str)
    assert isinstance(event.time, float) and event.time >= 0
    assert event.exited_at is None or event.exited_at > 0


@given(message=_MESSAGES, stamp=_STAMPS)
def test_a_well_formed_envelope_carries_its_messages_fields(
    message: Message, stamp: timestamp_pb2.Timestamp
) -> None:
    topics = {m.DESCRIPTOR.full_name: t for t, m in boundary.TOPIC_MESSAGES.items()}
    topic = topics[message.DESCRIPTOR.full_name]
    envelope = _envelope(topic, message)
    envelope.timestamp.CopyFrom(stamp)
    event = boundary.parse_envelope(envelope)
    assert event is not None
    field = "id" if topic.startswith("/containers/") else "container_id"
    assert event.container_id == getattr(message, field)
    if isinstance(message, task_pb2.TaskExit | task_pb2.TaskDelete):
        assert event.exit_status == message.exit_status
        assert event.exited_at == boundary.seconds(message.exited_at)


@given(
    state=st.integers(0, 10),
    created=st.integers(-(2**63), 2**63 - 1),
    finished=st.integers(-(2**63), 2**63 - 1),
    code=st.integers(-(2**31), 2**31 - 1),
    reason=_TEXT,
)
def test_any_cri_status_is_a_well_formed_record(
    state: int, created: int, finished: int, code: int, reason: str
) -> None:
    # Any state number, known or not, and any times and code.
    status = cri_pb2.ContainerStatus(
        state=state, created_at=created, finished_at=finished, exit_code=code, reason=reason
    )
    parsed = boundary.parse_cri_status(status)
    assert parsed.state in ("created", "running", "exited", "unknown")
    exited = parsed.state == "exited"
    assert (parsed.exit_code is not None, parsed.finished_at is not None) == (exited, exited)
    if exited:
        assert parsed.exit_code == code and parsed.finished_at is not None
        assert parsed.finished_at > 0


@given(
    status=st.integers(0, 10),
    pid=_U32,
    exit_status=_U32,
    stamp=_STAMPS,
    cid=_TEXT,
)
def test_any_task_is_a_well_formed_record(
    status: int, pid: int, exit_status: int, stamp: timestamp_pb2.Timestamp, cid: str
) -> None:
    process = task_types_pb2.Process(
        id=cid,
        pid=pid,
        status=status,
        exit_status=exit_status,
        exited_at=stamp,
    )
    task = boundary.parse_task(process)
    assert task.status in ("created", "running", "stopped", "paused", "unknown")
    assert (task.exit_status is None) == (task.exited_at is None)
