"""Showing a diagnostic once or over and over (--watch): a rich table or JSON lines.

gpus.py and rdma.py each give a `read()` that returns a report and a `table()` / `to_json()`
for it; `show()` prints it once or refreshes it in place every interval until Ctrl-C.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from rich.console import Console, RenderableType
from rich.live import Live

R = TypeVar("R")


class Diagnostic(Generic[R]):
    """How one diagnostic reads, draws and serialises its report."""

    def __init__(
        self,
        *,
        read: Callable[[], R],
        table: Callable[[R], RenderableType],
        to_json: Callable[[R], object],
        empty: Callable[[R], bool],
    ) -> None:
        self.read = read
        self.table = table
        self.to_json = to_json
        self.empty = empty


def show(
    diagnostic: Diagnostic[R],
    *,
    console: Console,
    as_json: bool,
    watch: bool,
    interval: float,
    stop: threading.Event | None = None,
) -> bool:
    """Print the report (refreshing while watching); False when there was nothing to show."""
    stop = stop or threading.Event()
    report = diagnostic.read()
    if as_json:
        while True:
            console.file.write(json.dumps(diagnostic.to_json(report), default=str) + "\n")
            console.file.flush()
            if not watch or stop.wait(interval):
                return not diagnostic.empty(report)
            report = diagnostic.read()
    if not watch:
        console.print(diagnostic.table(report))
        return not diagnostic.empty(report)
    with Live(diagnostic.table(report), console=console, auto_refresh=False) as live:
        while not stop.wait(interval):
            report = diagnostic.read()
            live.update(diagnostic.table(report), refresh=True)
    return not diagnostic.empty(report)
