from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from lens.runtime import config, errors
from lens.runtime.clock import FakeClock
from lens.runtime.periodic import Loop
from lens.runtime.process import Process

Eventually = Callable[..., None]


class Role:
    def __init__(self, loops: tuple[Loop, ...] = ()) -> None:
        self.clock = FakeClock()
        self.process = Process(
            "test-role",
            server=config.ServerConfig(host="127.0.0.1", port=0),
            service=config.ServiceConfig(loop_jitter_ratio=0.0, readiness_interval_seconds=5),
            clock=self.clock,
            rng=random.Random(1),
            handle_signals=False,
        )
        for loop in loops:
            self.process.add_loop(loop)
        self.codes: list[int] = []
        self.thread = threading.Thread(target=lambda: self.codes.append(self.process.service.run()))

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.process.http.port, timeout=3)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


@pytest.fixture
def role() -> Iterator[Role]:
    r = Role(loops=(Loop(name="work", interval_seconds=1, run=lambda: None),))
    dependency = {"up": True}

    def check() -> None:
        if not dependency["up"]:
            raise ConnectionError("database unreachable")

    r.process.health.add_readiness("database", check)
    r.dependency = dependency  # type: ignore[attr-defined]
    r.thread.start()
    assert r.process.service.started.wait(5)
    yield r
    r.process.service.request_stop("test over")
    r.thread.join(10)
    assert r.codes == [errors.EXIT_OK]


def test_a_role_serves_health_readiness_and_metrics(role: Role, eventually: Eventually) -> None:
    eventually(lambda: role.process.loops.runs("readiness") >= 1)
    assert role.get("/healthz")[0] == 200
    status, body = role.get("/readyz")
    assert status == 200
    assert json.loads(body)["checks"]["database"]["ok"] is True

    role.dependency["up"] = False  # type: ignore[attr-defined]
    eventually(lambda: role.clock.waiters == 3)
    role.clock.advance(5)
    eventually(lambda: role.process.loops.runs("readiness") >= 2)
    status, body = role.get("/readyz")
    assert status == 503
    assert (
        json.loads(body)["checks"]["database"]["detail"] == "ConnectionError: database unreachable"
    )

    eventually(lambda: role.clock.waiters == 3)
    role.clock.advance(5)  # the next render happens after the failing check was recorded
    eventually(lambda: role.process.loops.runs("metrics") >= 3)
    status, body = role.get("/metrics")
    text = body.decode()
    assert status == 200
    assert 'lens_readiness_check_success{check="database"} 0.0' in text
    assert 'lens_loop_runs_total{loop="work",result="success"}' in text
    assert "process_resident_memory_bytes" in text
    assert "_created" not in text


def test_a_stalled_loop_fails_liveness(eventually: Eventually) -> None:
    release = threading.Event()
    role = Role(
        loops=(
            Loop(name="hang", interval_seconds=1, run=lambda: release.wait(10), stall_seconds=5),
        )
    )
    role.thread.start()
    try:
        assert role.process.service.started.wait(5)
        assert role.get("/healthz")[0] == 200
        role.clock.advance(6)
        status, body = role.get("/healthz")
        assert status == 503
        assert json.loads(body)["checks"]["loops"]["detail"] == "loops stalled: hang"
    finally:
        release.set()
        role.process.service.request_stop("test over")
        role.thread.join(10)


def _process() -> Process:
    return Process(
        "p",
        server=config.ServerConfig(port=0),
        service=config.ServiceConfig(),
        handle_signals=False,
    )


def test_what_roles_add_is_named_once_per_process() -> None:
    process = _process()
    process.add_route("/v1/pods", lambda _: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="/v1/pods is added twice"):
        process.add_route("/v1/pods", lambda _: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="/metrics is added twice"):
        process.add_route("/metrics", lambda _: None)  # type: ignore[arg-type,return-value]
    process.health.add_readiness("database", lambda: None)
    with pytest.raises(ValueError, match="'database' is added twice"):
        process.health.add_readiness("database", lambda: None)
    process.add_loop(Loop(name="sync", interval_seconds=1, run=lambda: None))
    with pytest.raises(ValueError, match="sync is taken"):
        process.add_loop(Loop(name="sync", interval_seconds=1, run=lambda: None))
    process.metrics.reserve(["lens_gpu_info"], by="the node agent")
    with pytest.raises(ValueError, match="lens_gpu_info: metric family declared twice"):
        process.metrics.gauge("lens_gpu_info", "Static facts.")


def test_a_shared_resource_is_made_once() -> None:
    process = _process()
    made: list[int] = []
    first = process.shared("database sqlite:///x", lambda: made.append(1) or "db")
    second = process.shared("database sqlite:///x", lambda: made.append(2) or "other")
    assert (first, second, made) == ("db", "db", [1])


class _Failing:
    name = "event-server"

    async def start(self) -> None:
        raise OSError("address in use")

    async def stop(self) -> None:
        return None


def test_a_failed_part_is_named_with_its_role() -> None:
    process = _process()
    process.building = "jobs"
    process.add_part(_Failing())
    process.building = ""
    assert process.run() == errors.EXIT_FATAL
    assert process.failed() == "jobs: event-server: OSError: address in use"


def _lost() -> None:
    raise errors.FatalError("gone")


def test_a_fatal_loop_is_named_with_its_role() -> None:
    process = _process()
    process.building = "controller"
    process.add_loop(Loop(name="sync", interval_seconds=1, run=_lost))
    assert process.run() == errors.EXIT_FATAL
    assert process.failed() == "controller: loop sync: FatalError: gone"


def test_throughput_tuning_is_applied_once_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from lens.runtime import interpreter

    applied: list[int] = []
    monkeypatch.setattr(interpreter, "tune_for_throughput", lambda: applied.append(1))
    process = _process()
    process.apply_tuning()
    assert applied == []
    process.tune_for_throughput()
    process.tune_for_throughput()
    process.apply_tuning()
    assert applied == [1]


def test_the_port_keeps_the_configured_limits() -> None:
    import socket

    process = Process(
        "p",
        server=config.ServerConfig(host="127.0.0.1", port=0, max_connections=1),
        service=config.ServiceConfig(),
        handle_signals=False,
    )
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(process.run()))
    thread.start()
    try:
        assert process.service.started.wait(5)
        with socket.create_connection(("127.0.0.1", process.http.port)) as held:
            held.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert held.recv(12) == b"HTTP/1.1 200"
            conn = http.client.HTTPConnection("127.0.0.1", process.http.port, timeout=3)
            conn.request("GET", "/healthz")
            assert conn.getresponse().status == 503, "the one connection allowed is taken"
            conn.close()
    finally:
        process.service.request_stop("test over")
        thread.join(10)
    assert codes == [errors.EXIT_OK]


class _Stoppable:
    """A role's part; a loop of the role uses it until the part stops."""

    name = "tracking"

    def __init__(self) -> None:
        self.stopped = False

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        import asyncio

        self.stopped = True
        await asyncio.sleep(0.2)  # time enough for a loop still running to use the part


def test_loops_stop_before_the_parts_they_use() -> None:
    process = Process(
        "p",
        server=config.ServerConfig(host="127.0.0.1", port=0),
        service=config.ServiceConfig(loop_jitter_ratio=0.0),
        handle_signals=False,
    )
    part = _Stoppable()
    used_after_stop: list[bool] = []

    def use() -> None:
        if part.stopped:
            used_after_stop.append(True)
            raise errors.FatalError("a loop used a stopped part")

    process.add_part(part)
    process.add_loop(Loop(name="reconcile", interval_seconds=0.01, run=use))
    thread = threading.Thread(target=lambda: process.run())
    thread.start()
    assert process.service.started.wait(5)
    time.sleep(0.05)  # a few runs of the loop while the part is up
    process.service.request_stop("test over")
    thread.join(10)
    assert used_after_stop == []
    assert process.failed() is None


def test_a_part_name_is_added_once() -> None:
    process = _process()
    process.add_part(_Stoppable())
    with pytest.raises(ValueError, match="'tracking' is added twice"):
        process.add_part(_Stoppable())
    with pytest.raises(ValueError, match="'http' is added twice"):
        process.add_part(process.http)
