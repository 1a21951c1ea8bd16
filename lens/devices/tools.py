"""Running a host tool (amd-smi, rocm-smi, rdma) with a timeout: the one place that spawns one.

Never called per collection cycle (STYLE S5.10): only for facts refreshed every few minutes
and as a fallback when sysfs lacks something. In a DaemonSet the command prefix is typically
`nsenter --target 1 --mount --` so the host's own binary and libraries are used; without a
prefix, a tool named without a path is looked for under the host root first (ROCm's bin dir).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Sequence
from typing import Protocol

from lens.runtime import errors

SEARCH_DIRS = ("opt/rocm/bin", "usr/local/bin", "usr/bin", "usr/sbin", "bin", "sbin")


class Runner(Protocol):
    """What runs a tool for statics.py and rdmatool.py: a ToolRunner, or a stand-in in tests."""

    def run(self, command: Sequence[str]) -> str: ...


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolRunner:
    prefix: tuple[str, ...] = ()
    timeout_seconds: float = 30.0
    root: str = "/"

    def locate(self, tool: str) -> str:
        """Where `tool` is run from: as given when it has a path or a prefix runs it."""
        if "/" in tool or self.prefix or self.root.rstrip("/") == "":
            return tool
        for directory in SEARCH_DIRS:
            candidate = os.path.join(self.root, directory, tool)
            if os.access(candidate, os.X_OK):
                return candidate
        return tool

    def run(self, command: Sequence[str]) -> str:
        """The tool's stdout; SourceError when it is missing, hangs, fails or says nothing.

        Output is decoded as UTF-8 whatever the locale, a byte that is none replaced by U+FFFD:
        one stray byte in a product name must not cost the whole output."""
        tool = command[0]
        argv = [*self.prefix, self.locate(tool), *command[1:]]
        try:
            result = subprocess.run(
                argv, capture_output=True, timeout=self.timeout_seconds, check=False
            )
        except FileNotFoundError as exc:
            raise errors.NoDataError(f"{tool} is not installed") from exc
        except subprocess.TimeoutExpired as exc:
            raise errors.SourceError(
                f"{tool} did not answer within {self.timeout_seconds:g} s"
            ) from exc
        except OSError as exc:
            raise errors.SourceError(f"{tool} could not run: {exc.strerror}") from exc
        stdout = result.stdout.decode("utf-8", "replace")
        if result.returncode != 0:
            stderr = result.stderr.decode("utf-8", "replace")
            reason = (stderr.strip() or stdout.strip() or "no output").splitlines()
            raise errors.SourceError(f"{tool} exited {result.returncode}: {reason[-1][:200]}")
        if not stdout.strip():
            raise errors.SourceError(f"{tool} printed nothing")
        return stdout
