from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pytest

from lens.runtime import errors, lifecycle
from lens.runtime.lifecycle import Failure, Service


class Recorder:
    def __init__(
        self, name: str, log: list[str], *, fail_start: bool = False, hang_stop: bool = False
    ):
        self.name = name
        self._log = log
        self._fail_start = fail_start
        self._hang_stop = hang_stop

    async def start(self) -> None:
        if self._fail_start:
            raise RuntimeError(f"{self.name} cannot start")
        self._log.append(f"start {self.name}")

    async def stop(self) -> None:
        if self._hang_stop:
            await asyncio.sleep(3600)
        self._log.append(f"stop {self.name}")


def _run_in_thread(service: Service) -> tuple[threading.Thread, list[int]]:
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(service.run()))
    thread.start()
    return thread, codes


def test_parts_start_in_order_and_stop_in_reverse() -> None:
    log: list[str] = []
    service = Service("t", stop_timeout=5, handle_signals=False)
    for name in ("a", "b", "c"):
        service.add(Recorder(name, log))
    thread, codes = _run_in_thread(service)
    assert service.started.wait(3)
    service.request_stop("test")
    thread.join(5)
    assert codes == [errors.EXIT_OK]
    assert log == ["start a", "start b", "start c", "stop c", "stop b", "stop a"]
    service.request_stop("again, after it ended")  # harmless from any thread


def test_a_part_that_cannot_start_stops_the_started_ones_and_exits_fatal() -> None:
    log: list[str] = []
    service = Service(
        "t",
        stop_timeout=5,
        handle_signals=False,
        parts=[Recorder("a", log), Recorder("b", log, fail_start=True), Recorder("c", log)],
    )
    assert service.run() == errors.EXIT_FATAL
    assert log == ["start a", "stop a"]
    assert not service.started.is_set()
    assert service.failure is not None
    assert service.failure.part == "b"


class _Taken:
    name = "api-server"

    async def start(self) -> None:
        raise errors.ListenError(
            host="127.0.0.1",
            port=8080,
            purpose="the REST API",
            reason="the port is in use",
            key="api.port",
            env="LENS_API__PORT",
        )

    async def stop(self) -> None:
        raise AssertionError("a part that did not start is not stopped")


def test_an_address_that_cannot_be_listened_on_is_logged_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    service = Service("t", stop_timeout=5, handle_signals=False)
    service.add(Recorder("a", log))
    service.add(_Taken())
    with caplog.at_level("ERROR", logger="lens.runtime.lifecycle"):
        assert service.run() == errors.EXIT_FATAL
    (record,) = [r for r in caplog.records if r.getMessage() == "part failed to start"]
    assert record.exc_info is None
    assert vars(record)["address"] == "127.0.0.1:8080"
    assert vars(record)["setting"] == "api.port"
    assert service.failure is not None
    assert isinstance(service.failure.cause, errors.ListenError)


def test_an_unexpected_error_at_start_keeps_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = Service("t", stop_timeout=5, handle_signals=False)
    service.add(Recorder("b", [], fail_start=True))
    with caplog.at_level("ERROR", logger="lens.runtime.lifecycle"):
        assert service.run() == errors.EXIT_FATAL
    (record,) = [r for r in caplog.records if r.getMessage() == "part failed to start"]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


def test_a_fatal_error_from_any_thread_stops_the_service() -> None:
    log: list[str] = []
    service = Service("t", stop_timeout=5, handle_signals=False, parts=[Recorder("a", log)])
    thread, codes = _run_in_thread(service)
    assert service.started.wait(3)
    threading.Thread(
        target=lambda: service.fail(errors.FatalError("disk gone"), part="loop sync")
    ).start()
    thread.join(5)
    assert codes == [errors.EXIT_FATAL]
    assert log == ["start a", "stop a"]
    assert service.failure == Failure(part="loop sync", error="FatalError: disk gone")


def test_stopping_is_bounded_even_when_a_part_hangs() -> None:
    log: list[str] = []
    service = Service(
        "t",
        stop_timeout=0.3,
        handle_signals=False,
        parts=[Recorder("a", log), Recorder("stuck", log, hang_stop=True), Recorder("c", log)],
    )
    thread, codes = _run_in_thread(service)
    assert service.started.wait(3)
    stopping = time.monotonic()
    service.request_stop("test")
    thread.join(5)
    assert codes == [errors.EXIT_STOP_TIMEOUT]
    assert time.monotonic() - stopping < 3
    # Past the time, "a" is still told to stop (a part whose threads were never told went on
    # running, lens demo's writing the files it was to leave behind, #36).
    assert log == ["start a", "start stuck", "start c", "stop c", "stop a"]


def test_a_part_that_fails_to_stop_is_logged_and_the_others_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    class Broken(Recorder):
        async def stop(self) -> None:
            raise OSError("socket gone")

    service = Service(
        "t",
        stop_timeout=5,
        handle_signals=False,
        parts=[Recorder("a", log), Broken("broken", log), Recorder("c", log)],
    )
    thread, codes = _run_in_thread(service)
    assert service.started.wait(3)
    with caplog.at_level("ERROR", logger="lens.runtime.lifecycle"):
        service.request_stop("test")
        thread.join(5)
    assert codes == [errors.EXIT_STOP_TIMEOUT]
    assert log == ["start a", "start broken", "start c", "stop c", "stop a"]
    (record,) = [r for r in caplog.records if r.getMessage() == "part failed to stop"]
    assert record.exc_info is not None and record.exc_info[0] is OSError


def test_a_stop_requested_before_start_starts_nothing() -> None:
    log: list[str] = []
    service = Service("t", stop_timeout=1, handle_signals=False, parts=[Recorder("a", log)])
    service.request_stop("early")
    assert service.run() == errors.EXIT_OK
    assert log == []


def test_in_thread_returns_results_and_raises_errors() -> None:
    async def both() -> tuple[int, str]:
        value = await lifecycle.in_thread(lambda: 41 + 1, name="t")
        try:
            await lifecycle.in_thread(_boom, name="t")
        except ValueError as exc:
            return value, str(exc)
        return value, ""

    assert asyncio.run(both()) == (42, "boom")


def _boom() -> None:
    raise ValueError("boom")


def test_in_thread_does_not_hold_up_a_bounded_wait() -> None:
    release = threading.Event()

    async def bounded() -> bool:
        try:
            await asyncio.wait_for(lifecycle.in_thread(lambda: release.wait(10), name="t"), 0.05)
        except TimeoutError:
            return True
        return False

    started = time.monotonic()
    assert asyncio.run(bounded())
    assert time.monotonic() - started < 2
    release.set()


SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from lens.runtime.lifecycle import Service

    class Part:
        name = "part"
        async def start(self):
            print("started", flush=True)
        async def stop(self):
            print("stopping", flush=True)
            if sys.argv[1] == "hang":
                await asyncio.sleep(3600)

    sys.exit(Service("script", stop_timeout=30, parts=[Part()]).run())
    """
)


@contextlib.contextmanager
def _spawn(mode: str) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", SCRIPT, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "started"
        try:
            yield process
        finally:
            process.kill()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_process_gracefully(signum: signal.Signals) -> None:
    with _spawn("clean") as process:
        process.send_signal(signum)
        assert process.wait(timeout=10) == errors.EXIT_OK


def test_a_second_signal_exits_at_once() -> None:
    with _spawn("hang") as process:
        process.send_signal(signal.SIGTERM)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "stopping"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == errors.EXIT_SIGNAL_TWICE
