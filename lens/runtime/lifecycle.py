"""Service lifecycle: start parts in order, stop them in reverse on SIGTERM/SIGINT within a bound.

The launcher (runtime/launcher.py) gives a Service the parts every role of the process added
(HTTP server, periodic runner, gRPC servers...) and calls `Service.run()`, which returns the
process exit code: 0 after a clean stop, EXIT_FATAL when a part failed (`failure` names it),
EXIT_STOP_TIMEOUT when parts did not stop in time. A second signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from lens.runtime import errors
from lens.runtime.errors import EXIT_FATAL, EXIT_OK, EXIT_SIGNAL_TWICE, EXIT_STOP_TIMEOUT

T = TypeVar("T")

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
HEARTBEAT_STALE_SECONDS = 30.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """The first part that failed, and how (`cause`: the exception itself)."""

    part: str
    error: str
    cause: BaseException | None = dataclasses.field(default=None, compare=False)


class Part(Protocol):
    """Something a role runs: started once, stopped once."""

    @property
    def name(self) -> str: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Service:
    """Runs parts until a signal, `request_stop()` or `fail()`; a part is one unit of failure."""

    def __init__(
        self,
        name: str,
        *,
        stop_timeout: float,
        parts: Sequence[Part] = (),
        handle_signals: bool = True,
    ) -> None:
        self.name = name
        self._stop_timeout = stop_timeout
        self._parts: list[Part] = list(parts)
        self._handle_signals = handle_signals
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._fatal: BaseException | None = None
        self.failure: Failure | None = None
        self._stop_reason = ""
        self._heartbeat: float | None = None
        self._started = threading.Event()
        self._signals_seen = 0

    def add(self, part: Part, *, before: Part | None = None) -> None:
        """Add `part` last, or just before `before` (so it starts before and stops after it)."""
        if before is None:
            self._parts.append(part)
        else:
            self._parts.insert(self._parts.index(before), part)

    @property
    def started(self) -> threading.Event:
        """Set once every part has started (for tests and composed roles)."""
        return self._started

    def request_stop(self, reason: str) -> None:
        """Ask for a graceful stop; safe from any thread."""
        self._stop_reason = self._stop_reason or reason
        self._wake()

    def fail(self, exc: BaseException, *, part: str) -> None:
        """Report a fatal error of `part` from any thread; the service stops and exits non-zero."""
        if self._fatal is None:
            self._fatal = exc
            self.failure = Failure(part=part, error=f"{type(exc).__name__}: {exc}", cause=exc)
        self.request_stop(f"fatal error in {part}: {type(exc).__name__}: {exc}")

    def event_loop_stalled(self) -> str | None:
        """Liveness probe: the event loop has not ticked for too long."""
        # Real time on purpose: this is about the process, not about simulated schedules.
        if self._heartbeat is None:
            return None
        age = time.monotonic() - self._heartbeat
        if age > HEARTBEAT_STALE_SECONDS:
            return f"event loop unresponsive for {age:.0f} s"
        return None

    def _wake(self) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            # Its loop closed: the service has ended, nothing is left to stop.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopping.set)

    def run(self) -> int:
        """Run until stopped and return the exit code."""
        return asyncio.run(self._main())

    async def _main(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        if self._stop_reason:
            self._stopping.set()
        if self._handle_signals:
            self._install_signals()
        heartbeat = asyncio.create_task(self._beat(), name="heartbeat")
        started = await self._start_parts()
        if len(started) == len(self._parts):
            self._started.set()
            log.info("service started", extra={"service": self.name})
            await self._stopping.wait()
        log.info("service stopping", extra={"service": self.name, "reason": self._stop_reason})
        clean = await self._stop_parts(started)
        heartbeat.cancel()
        if self._handle_signals:
            self._remove_signals()
        if self._fatal is not None:
            return EXIT_FATAL
        if not clean:
            return EXIT_STOP_TIMEOUT
        log.info("service stopped", extra={"service": self.name})
        return EXIT_OK

    async def _beat(self) -> None:
        while True:
            self._heartbeat = time.monotonic()
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def _start_parts(self) -> list[Part]:
        started: list[Part] = []
        for part in self._parts:
            if self._stopping is not None and self._stopping.is_set():
                break
            try:
                await part.start()
            except errors.ListenError as exc:
                # Expected, and its message says what to change: no traceback.
                log.error(
                    "part failed to start",
                    extra={
                        "part": part.name,
                        "address": exc.address,
                        "reason": exc.reason,
                        "setting": exc.key,
                    },
                )
                self.fail(exc, part=part.name)
                break
            except Exception as exc:
                log.error("part failed to start", extra={"part": part.name}, exc_info=True)
                self.fail(exc, part=part.name)
                break
            started.append(part)
        return started

    async def _stop_parts(self, started: list[Part]) -> bool:
        deadline = time.monotonic() + self._stop_timeout
        clean = True
        for part in reversed(started):
            remaining = max(0.0, deadline - time.monotonic())
            # A task waited on, not wait_for: once the time is up, wait_for(timeout=0) cancels
            # a part's stop before it begins, and the part's threads are never told to end
            # (lens demo's simulated cluster went on writing the files it was to leave).
            stopping = asyncio.ensure_future(part.stop())
            done, _ = await asyncio.wait({stopping}, timeout=remaining)
            if not done:
                stopping.cancel()
                log.error("part did not stop in time", extra={"part": part.name})
                clean = False
            elif (error := stopping.exception()) is not None:
                log.error("part failed to stop", extra={"part": part.name}, exc_info=error)
                clean = False
        return clean

    def _install_signals(self) -> None:
        assert self._loop is not None
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._loop.add_signal_handler(signum, self._on_signal, signum)

    def _remove_signals(self) -> None:
        assert self._loop is not None
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        self._signals_seen += 1
        name = signal.Signals(signum).name
        if self._signals_seen > 1:
            log.error("second signal, exiting now", extra={"signal": name})
            logging.shutdown()
            os._exit(EXIT_SIGNAL_TWICE)
        self.request_stop(f"signal {name}")


async def in_thread(function: Callable[[], T], *, name: str) -> T:
    """Await `function` run on a new daemon thread.

    Unlike asyncio.to_thread, a call that never returns cannot hold up the interpreter's exit:
    the service's stop bound stays a bound.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def deliver(outcome: Callable[[], None]) -> None:
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:
            log.debug("thread finished after its event loop closed", extra={"thread": name})

    def target() -> None:
        try:
            result = function()
        except BaseException as exc:
            error = exc
            deliver(lambda: future.set_exception(error))
        else:
            deliver(lambda: future.set_result(result))

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future
