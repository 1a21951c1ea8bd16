"""A temporary host root for the tuning tests: proc/sys and etc files under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest


def put(root: Path, relative: str, text: str) -> Path:
    """Write `text` at `relative` under the host root, making its folders."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A host whose kernel offers vm.max_map_count (65530, the kernel default),
    kernel.numa_balancing (1) and net.ipv4.ip_local_port_range (32768 60999); etc is empty."""
    root = tmp_path / "host"
    put(root, "proc/sys/vm/max_map_count", "65530\n")
    put(root, "proc/sys/kernel/numa_balancing", "1\n")
    put(root, "proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n")
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file's bytes and mode and every folder (bytes None) under `root`, by path."""
    found: dict[str, tuple[bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        mode = path.stat().st_mode & 0o7777
        found[str(path.relative_to(root))] = (None if path.is_dir() else path.read_bytes(), mode)
    return found
