from __future__ import annotations

import http.client
import json
import random
import threading
from collections.abc import Callable, Iterator

import pytest

from lens.runtime import config, errors, kit
from lens.runtime.clock import FakeClock
from lens.runtime.periodic import Loop

Eventually = Callable[..., None]


class Role:
    def __init__(self, loops: tuple[Loop, ...] = ()) -> None:
        self.clock = FakeClock()
        self.kit = kit.build(
            "test-role",
            server=config.ServerConfig(host="127.0.0.1", port=0),
            service=config.ServiceConfig(loop_jitter_ratio=0.0, readiness_interval_seconds=5),
            loops=loops,
            clock=self.clock,
            rng=random.Random(1),
            handle_signals=False,
        )
        self.codes: list[int] = []
        self.thread = threading.Thread(target=lambda: self.codes.append(self.kit.service.run()))

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.kit.http.port, timeout=3)
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

    r.kit.health.add_readiness("database", check)
    r.dependency = dependency  # type: ignore[attr-defined]
    r.thread.start()
    assert r.kit.service.started.wait(5)
    yield r
    r.kit.service.request_stop("test over")
    r.thread.join(10)
    assert r.codes == [errors.EXIT_OK]


def test_a_role_serves_health_readiness_and_metrics(role: Role, eventually: Eventually) -> None:
    eventually(lambda: role.kit.loops.runs("readiness") >= 1)
    assert role.get("/healthz")[0] == 200
    status, body = role.get("/readyz")
    assert status == 200
    assert json.loads(body)["checks"]["database"]["ok"] is True

    role.dependency["up"] = False  # type: ignore[attr-defined]
    eventually(lambda: role.clock.waiters == 3)
    role.clock.advance(5)
    eventually(lambda: role.kit.loops.runs("readiness") >= 2)
    status, body = role.get("/readyz")
    assert status == 503
    assert (
        json.loads(body)["checks"]["database"]["detail"] == "ConnectionError: database unreachable"
    )

    eventually(lambda: role.clock.waiters == 3)
    role.clock.advance(5)  # the next render happens after the failing check was recorded
    eventually(lambda: role.kit.loops.runs("metrics") >= 3)
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
        assert role.kit.service.started.wait(5)
        assert role.get("/healthz")[0] == 200
        role.clock.advance(6)
        status, body = role.get("/healthz")
        assert status == 503
        assert json.loads(body)["checks"]["loops"]["detail"] == "loops stalled: hang"
    finally:
        release.set()
        role.kit.service.request_stop("test over")
        role.thread.join(10)
