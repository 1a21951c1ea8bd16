"""The file watch runs the cycle soon after a change in a watched folder, once per burst."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from lens.roles.tune.watching import FileWatch


def test_a_burst_of_changes_runs_the_cycle_once(tmp_path: Path) -> None:
    runs: list[str] = []
    ran = threading.Event()

    def cycle() -> None:
        runs.append(threading.current_thread().name)
        ran.set()

    async def scenario() -> None:
        watch = FileWatch([tmp_path / "sysctl.d"], cycle)
        await watch.start()
        assert watch.watching
        (tmp_path / "sysctl.d").mkdir()
        for index in range(5):
            (tmp_path / "sysctl.d" / f"{index}.conf").write_text("a = 1\n")
        await asyncio.sleep(1.0)
        await watch.stop()

    asyncio.run(scenario())
    assert ran.is_set()
    assert len(runs) == 1
    assert runs[0] != threading.main_thread().name  # the cycle's file work is off the loop
