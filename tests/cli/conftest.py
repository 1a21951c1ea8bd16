"""Helpers of the CLI tests: `lens` run as a subprocess, `lens sim kube` around a test, and
the checks of property-based tests that run commands in-process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from click.testing import Result
from hypothesis import strategies as st

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
        try:
            yield process
        finally:
            # Also when the test failed: Popen's own exit waits for the process with no limit,
            # and one never told to stop kept a worker waiting until CI's end.
            process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                raise
        assert code == 0


def with_client(kubeconfig: Path, body: str) -> str:
    """Run `body` in a fresh interpreter with the official client configured from `kubeconfig`."""
    setup = f"kubernetes.config.load_kube_config(config_file={str(kubeconfig)!r})"
    probe = f"import kubernetes\n{setup}\n{body}"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# What a command-line argument or an environment variable can hold: any text but NUL. Not the
# lone surrogates undecodable bytes become: CliRunner's output streams refuse them, where a real
# process's click streams replace them (tests/runtime/config covers them in the environment).
ARGV_TEXT = st.text().filter(lambda text: "\x00" not in text)


def assert_no_traceback(result: Result, *, codes: tuple[int, ...]) -> None:
    """The command ended by exiting with one of `codes`, not by an exception."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in codes, result.output
    assert "Traceback" not in result.output


def assert_one_line(result: Result, prefix: str) -> None:
    """stderr is one line (on a terminal: a \\x1e or \\x85 in it is no line break there)."""
    assert result.stderr.startswith(prefix), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
