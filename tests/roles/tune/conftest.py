"""A host root for the tuning daemon: the kernel defaults under proc/sys, an empty etc."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/sys/vm/max_map_count").write_text("65530\n")
    (root / "proc/sys/kernel").mkdir()
    (root / "proc/sys/kernel/numa_balancing").write_text("1\n")
    (root / "etc").mkdir()
    return root
