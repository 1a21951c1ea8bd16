"""Helpers of the CLI tests: `lens` run as a subprocess, and `lens sim kube` around a test."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_lens(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lens", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@contextlib.contextmanager
def sim_kube(kubeconfig: Path, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """`lens sim kube` on a free port, stopped with SIGTERM (and checked to exit 0)."""
    command = [
        sys.executable,
        "-m",
        "lens",
        "sim",
        "kube",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        *extra,
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        yield process
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


def with_client(kubeconfig: Path, body: str) -> str:
    """Run `body` in a fresh interpreter with the official client configured from `kubeconfig`."""
    setup = f"kubernetes.config.load_kube_config(config_file={str(kubeconfig)!r})"
    probe = f"import kubernetes\n{setup}\n{body}"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
