"""The demo's log collector posts what the training pods printed as fluent-bit records that the
real intake parses to the same pods and lines, and keeps them while the intake refuses."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lens.roles.demo.logshipping import LogShipper
from lens.runtime.clock import FakeClock
from lens.sim.hosts import profiles
from lens.sim.scenario.trainlogs import ITERATION_SECONDS, STARTUP_SECONDS
from lens.sim.scenario.truth import Truth, WorkloadRef
from lens.telemetry.trainlogs.records import parse_body

TRAIN = WorkloadRef(kind="PyTorchJob", name="llama", namespace="ml", uid="w-llama")
T0 = 1_800_000_000.0


class Intake:
    """/v1/logs answering the statuses it is told (then 200), keeping the bodies of its 200s."""

    def __init__(self) -> None:
        self.statuses: queue.Queue[int] = queue.Queue()
        self.bodies: queue.Queue[bytes] = queue.Queue()
        intake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = 200 if intake.statuses.empty() else intake.statuses.get()
                if status == 200:
                    intake.bodies.put(body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/logs"


@pytest.fixture
def intake() -> Iterator[Intake]:
    started = Intake()
    yield started
    started.server.shutdown()
    started.server.server_close()


def _truth() -> Truth:
    truth = Truth({"a": 8}, {TRAIN.key: profiles.Constant(70)})
    truth.bind(
        pod_uid="p0",
        namespace="ml",
        pod_name="llama-worker-0",
        workload=TRAIN,
        node="a",
        gpus=(0, 1),
        at=T0,
    )
    return truth


def test_lines_reach_the_intake_as_records_of_their_pod_and_are_kept_while_refused(
    intake: Intake,
) -> None:
    clock = FakeClock(start_time=T0)
    shipper = LogShipper(_truth(), clock=clock, url=lambda: intake.url)
    shipper.ship()  # nothing printed yet
    clock.advance(STARTUP_SECONDS + ITERATION_SECONDS)
    intake.statuses.put(503)
    shipper.ship()  # refused: kept
    assert intake.bodies.empty() and shipper.shipped == 0
    clock.advance(ITERATION_SECONDS)
    shipper.ship()
    parsed = parse_body(intake.bodies.get(timeout=5), received_at=T0 + 100)
    assert [(r.pod_uid, r.pod_name, r.namespace, r.node) for r in parsed.records] == [
        ("p0", "llama-worker-0", "ml", "a")
    ] * 3
    assert parsed.records[0].line == "training ..."
    assert [r.at for r in parsed.records] == [
        T0 + STARTUP_SECONDS,
        T0 + STARTUP_SECONDS + ITERATION_SECONDS,
        T0 + STARTUP_SECONDS + 2 * ITERATION_SECONDS,
    ]
    assert shipper.shipped == 3
    shipper.ship()
    assert intake.bodies.empty(), "nothing new, nothing sent"


def test_an_intake_that_cannot_be_reached_loses_nothing(intake: Intake) -> None:
    clock = FakeClock(start_time=T0)
    urls = iter(["http://127.0.0.1:9/v1/logs", intake.url])
    shipper = LogShipper(_truth(), clock=clock, url=lambda: next(urls))
    shipper.ship()
    clock.advance(STARTUP_SECONDS)
    shipper.ship()  # connection refused
    shipper.ship()
    parsed = parse_body(intake.bodies.get(timeout=5), received_at=T0 + 100)
    assert [r.line for r in parsed.records] == ["training ..."]
