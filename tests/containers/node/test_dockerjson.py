"""Docker's /events messages and inspect bodies: as Docker writes them, and anything else."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lens.containers.node import dockerjson
from lens.containers.node.dockerjson import (
    DeviceAsks,
    GpuRequest,
    parse_container,
    parse_event,
    parse_event_line,
    parse_task,
    parse_time,
)
from lens.containers.node.records import RuntimeEvent, TaskRecord
from lens.containers.node.watching import MALFORMED, NOT_JSON, RECORD, MalformedError
from lens.runtime import errors
from lens.sim.docker import event_line, inspect_body

DIE: dict[str, Any] = {
    "status": "die",
    "id": "8aec0c17563d",
    "Type": "container",
    "Action": "die",
    "Actor": {"ID": "8aec0c17563d", "Attributes": {"exitCode": "137", "name": "oom1"}},
    "time": 1795230203,
    "timeNano": 1795230203454553106,
}
BODY = inspect_body("c1", name="worker", labels={"team": "a"}, devices=["/dev/dri"])
TOPICS = {"/containers/create", "/tasks/start", "/tasks/oom", "/tasks/exit", "/containers/delete"}
INT32 = range(-(2**31), 2**31)


def test_times_and_events_as_docker_writes_them() -> None:
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time(None) is None
    assert parse_time("2026-11-21T03:03:04.79935926Z") == pytest.approx(1795230184.79935926)
    assert parse_time("2026-11-21T04:03:04+01:00") == 1795230184.0
    with pytest.raises(errors.SourceError, match="unreadable"):
        parse_time("yesterday")
    assert parse_event(DIE) == RuntimeEvent(
        topic="/tasks/exit",
        container_id="8aec0c17563d",
        time=1795230203.454553106,
        exit_status=137,
        exited_at=1795230203.454553106,
    )
    assert parse_event({**DIE, "Action": "attach"}) is None
    assert parse_event({**DIE, "Type": "network"}) is None
    start = parse_event_line(event_line("start", "c1", time_nano=1795230203_000000000))
    assert start == RuntimeEvent(topic="/tasks/start", container_id="c1", time=1795230203.0)


def test_times_near_and_past_year_9999() -> None:
    """The last nanosecond of 9999 is a time (rounded up to 10000-01-01, which the event wire
    brings into the store's range); an offset moving it past 9999 or a year 10000 is none."""
    assert parse_time("9999-12-31T23:59:59.999999999Z") == dockerjson.LATEST
    for beyond in ("9999-12-31T23:59:59-01:00", "10000-01-01T00:00:00Z", "1e9999"):
        with pytest.raises(MalformedError, match="unreadable") as caught:
            parse_time(beyond)  # OverflowError from astimezone before the fix
        assert caught.value.reason == RECORD
    with pytest.raises(MalformedError, match="no string"):
        parse_time(253402300800)
    last_nano = {**DIE, "timeNano": 253402300799_999999999}
    assert parse_event(last_nano) is not None
    for nanos in (253402300800_000000001, 10**400, -(10**30)):
        with pytest.raises(MalformedError, match="out of range"):
            parse_event({**DIE, "timeNano": nanos})  # 10**400: OverflowError before the fix


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({**DIE, "Actor": ["8aec0c17563d"]}, "Actor is no JSON object"),
        ({**DIE, "Actor": {**DIE["Actor"], "Attributes": ["x"]}}, "Attributes is no JSON"),
        ({**DIE, "timeNano": "1795230203454553106"}, "no number"),
        ({**DIE, "timeNano": None, "time": "now"}, "no number"),
        ({**DIE, "timeNano": True}, "no number"),
        ({**DIE, "timeNano": math.nan}, "no number"),
        ({**DIE, "timeNano": None, "time": None}, "without a time"),
        ({**DIE, "Actor": {"ID": 7}, "id": None}, "without a container id"),
        ({**DIE, "Action": ["die"]}, "without an Action"),
        (["not", "an", "event"], "event is no JSON object"),
    ],
)
def test_an_odd_event_is_a_malformed_error(message: object, problem: str) -> None:
    """Before the fix, a list for Actor was an AttributeError (ending the watcher's thread) and
    a string timeNano was read as a number."""
    with pytest.raises(MalformedError, match=problem) as caught:
        parse_event(message)
    assert caught.value.reason == MALFORMED


def test_an_exit_code_that_is_no_number_is_unknown() -> None:
    for code in ("²", "9" * 5000, "99999999999", "", "-"):
        attributes = {"exitCode": code}
        event = parse_event({**DIE, "Actor": {"ID": "c", "Attributes": attributes}})
        assert event is not None and event.exit_status is None


def test_lines_that_are_no_json() -> None:
    for line in (b"{nope", b"[" * 100_000, b"\xff\xfe", b'{"a": 1' + b"1" * 5000 + b"}"):
        with pytest.raises(MalformedError, match="not JSON") as caught:
            parse_event_line(line)  # RecursionError escaped before the fix
        assert caught.value.reason == NOT_JSON


def test_a_container_and_its_task_from_an_inspect_body() -> None:
    found = parse_container(BODY)
    assert (found.id, found.name, found.labels, found.image) == (
        "c1",
        "worker",
        {"team": "a"},
        "busybox",
    )
    assert found.created_at == pytest.approx(1795230184.799359)
    assert found.devices == DeviceAsks(privileged=False, paths=("/dev/dri",))
    task = parse_task("c1", BODY)
    assert task == TaskRecord(
        container_id="c1", status="running", pid=4242, exit_status=None, exited_at=None
    )
    exited = {**BODY, "State": {**BODY["State"], "Status": "exited", "ExitCode": 3}}
    exited["State"]["FinishedAt"] = "2026-11-21T03:04:04Z"
    assert parse_task("c1", exited).exit_status == 3
    requests = [
        {"Driver": "nvidia", "Count": -1, "DeviceIDs": None, "Capabilities": [["gpu"]]},
        {"Driver": "", "Count": 0, "DeviceIDs": ["1", "GPU-x"], "Capabilities": [["gpu"]]},
        {"Driver": "other", "Count": 1, "DeviceIDs": None, "Capabilities": [["fpga"]]},
    ]
    asked = {**BODY, "HostConfig": {"Privileged": True, "DeviceRequests": requests}}
    assert parse_container(asked).devices == DeviceAsks(
        privileged=True,
        gpu_requests=(
            GpuRequest(device_ids=(), count=-1),
            GpuRequest(device_ids=("1", "GPU-x"), count=0),
        ),
    )


def _with(path: tuple[str, ...], value: object) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(BODY))
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("Config",), ["busybox"], "Config is no JSON object"),
        (("Config", "Labels"), {"team": 1}, "Labels holds a value"),
        (("HostConfig", "Devices"), {"PathOnHost": "/dev/dri"}, "Devices is no JSON array"),
        (("HostConfig", "Devices"), [{"PathOnHost": "/dev/\0x"}], "path .* unusable"),
        (("HostConfig", "Privileged"), "yes", "Privileged is no boolean"),
        (("HostConfig", "DeviceRequests"), [{"Driver": "nvidia", "Count": "2"}], "no count"),
        (("Created",), "9999-12-31T23:59:59-01:00", "unreadable"),
        (("Id",), None, "without an Id"),
    ],
)
def test_an_odd_inspect_body_is_a_malformed_record(
    path: tuple[str, ...], value: object, problem: str
) -> None:
    with pytest.raises(MalformedError, match=problem) as caught:
        parse_container(_with(path, value))
    assert caught.value.reason == RECORD


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        ({"Status": "running", "Pid": "4242"}, "Pid '4242' is no process id"),
        ({"Status": "running", "Pid": "not-a-pid"}, "no process id"),
        ({"Status": "running", "Pid": -1}, "no process id"),
        ({"Status": "exited", "FinishedAt": ["x"]}, "no string"),
        (["running"], "State is no JSON object"),
    ],
)
def test_an_odd_state_is_a_malformed_record(state: object, problem: str) -> None:
    """A string pid was a ValueError that ended the watcher's thread before the fix."""
    with pytest.raises(MalformedError, match=problem):
        parse_task("c1", {**BODY, "State": state})


# JSON as json.loads gives it: what any engine (or something in its place) could answer.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["container", "die", "start", "0001-01-01T00:00:00Z", "/dev/dri", "nvidia"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


def _check_event(event: RuntimeEvent | None) -> None:
    if event is None:
        return
    assert event.topic in TOPICS and isinstance(event.container_id, str) and event.container_id
    assert math.isfinite(event.time) and dockerjson.EARLIEST <= event.time <= dockerjson.LATEST
    assert event.exit_status is None or event.exit_status in INT32
    assert event.exited_at in (None, event.time)


def _fields(base: dict[str, Any], keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """`base` with some of `keys` given any JSON value, or left out."""
    return st.fixed_dictionaries({}, optional={key: JSON for key in keys}).map(
        lambda changed: {**base, **changed}
    )


@given(st.binary())
@example(b'{"Type": "container", "Action": "die", "Actor": []}')
@example(b"[" * 5000)
def test_any_line_is_an_event_nothing_or_a_malformed_error(line: bytes) -> None:
    try:
        event = parse_event_line(line)
    except MalformedError:
        return
    _check_event(event)


@given(
    JSON
    | _fields(DIE, list(DIE))
    | _fields(DIE, ["Actor"]).map(lambda m: {**m, "Actor": {"ID": "c", "Attributes": m["Actor"]}})
)
def test_any_message_is_an_event_nothing_or_a_malformed_error(message: object) -> None:
    try:
        event = parse_event(message)
    except MalformedError:
        return
    _check_event(event)


@given(st.integers() | st.floats(), st.sampled_from(["time", "timeNano"]))
def test_any_number_as_a_time_is_an_event_in_range_or_an_error(value: float, key: str) -> None:
    message = {**DIE, "timeNano": None, key: value}
    try:
        event = parse_event(message)
    except MalformedError:
        return
    _check_event(event)


@given(st.text() | st.datetimes().map(lambda d: d.isoformat() + "Z"))
@example("9999-12-31T23:59:59.999999999Z")
@example("0001-01-01T00:00:00+00:01")
def test_any_text_is_a_time_none_or_a_malformed_error(text: str) -> None:
    try:
        seconds = parse_time(text)
    except MalformedError:
        return
    assert seconds is None or dockerjson.EARLIEST <= seconds <= dockerjson.LATEST


HOST = BODY["HostConfig"]
REQUEST = {"Driver": "nvidia", "Count": 1, "DeviceIDs": ["0"], "Capabilities": [["gpu"]]}


@given(
    JSON
    | _fields(BODY, list(BODY))
    | _fields(HOST, [*HOST, "DeviceRequests"]).map(lambda h: {**BODY, "HostConfig": h})
    | _fields(REQUEST, list(REQUEST)).map(lambda r: {**BODY, "HostConfig": {"DeviceRequests": [r]}})
    | _fields(BODY["Config"], ["Labels", "Image"]).map(lambda c: {**BODY, "Config": c})
)
def test_any_inspect_body_is_a_container_or_a_malformed_record(body: object) -> None:
    try:
        found = parse_container(body)
    except MalformedError as exc:
        assert exc.reason == RECORD
        return
    assert isinstance(found.id, str) and found.id and isinstance(found.name, str)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in found.labels.items())
    assert math.isfinite(found.created_at)
    assert all(p.startswith("/") and "\0" not in p for p in found.devices.paths)
    for request in found.devices.gpu_requests:
        assert request.count >= -1 and all(isinstance(i, str) for i in request.device_ids)


@given(JSON | _fields(BODY["State"], list(BODY["State"])).map(lambda s: {**BODY, "State": s}))
def test_any_state_is_a_task_or_a_malformed_record(body: object) -> None:
    try:
        task = parse_task("c1", body)
    except MalformedError as exc:
        assert exc.reason == RECORD
        return
    assert task.status in {"created", "running", "paused", "stopped", "unknown"}
    assert isinstance(task.pid, int) and task.pid >= 0
    assert task.exit_status is None or task.exit_status in INT32
    assert task.exited_at is None or math.isfinite(task.exited_at)
