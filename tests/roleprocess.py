"""`lens <role>` as a child process of a test, killable with SIGKILL (the end-to-end tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path


class Process:
    """`lens <role>` as a child process, killable with SIGKILL."""

    def __init__(self, role: str, env: dict[str, str], log: Path) -> None:
        self._role, self.env, self._log = role, env, log
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self._log.open("ab") as out:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "lens", self._role],
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def kill(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGKILL)
        self._process.wait(10)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
