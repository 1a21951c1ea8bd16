"""A part that runs the tuning cycle as soon as a file it reads changes (inotify), so drift in
files is repaired at once rather than at the next periodic check. Where inotify is unavailable
the periodic check alone remains, and the log says so."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from lens.runtime import inotify

log = logging.getLogger(__name__)

# Editors and package managers write a file in several steps; one cycle after they settle.
SETTLE_SECONDS = 0.2


class FileWatch:
    """Runs `on_change` (in a thread) shortly after anything changes in `folders`."""

    name = "tune-file-watch"

    def __init__(self, folders: Sequence[Path], on_change: Callable[[], None]) -> None:
        self._folders = tuple(folders)
        self._on_change = on_change
        self._watch: inotify.FolderWatch | None = None
        self._pending: asyncio.Task[None] | None = None
        self._again = False  # a change came while the cycle ran: one more cycle after it

    @property
    def watching(self) -> bool:
        return self._watch is not None

    async def start(self) -> None:
        try:
            self._watch = inotify.FolderWatch(self._folders)
        except OSError as exc:
            log.warning(
                "no inotify: file drift is seen at the periodic check only",
                extra={"error": str(exc)},
            )
            return
        asyncio.get_running_loop().add_reader(self._watch.fileno(), self._readable)

    async def stop(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        if self._watch is not None:
            asyncio.get_running_loop().remove_reader(self._watch.fileno())
            self._watch.close()
            self._watch = None

    def _readable(self) -> None:
        if self._watch is None:
            return
        self._watch.drain()
        self._watch.refresh()  # a folder made since is watched itself
        if self._pending is None or self._pending.done():
            self._pending = asyncio.get_running_loop().create_task(self._settle_and_run())
        else:
            self._again = True

    async def _settle_and_run(self) -> None:
        await asyncio.sleep(SETTLE_SECONDS)
        await asyncio.to_thread(self._on_change)
        while self._again:
            self._again = False
            await asyncio.to_thread(self._on_change)
