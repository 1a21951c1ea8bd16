"""`lens rdma`: ports from sysfs (or the rdma tool), with throughput while watching."""

from __future__ import annotations

import dataclasses
import io
import json
import time

import pytest
from rich.console import Console

from lens.devices.sources import node_sources
from lens.roles.diagnostics import rdma
from lens.runtime.clock import FakeClock
from lens.runtime.config import HostConfig
from lens.sim.hosts.tree import HostTree


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=250)
    console.print(renderable)
    return console.file.getvalue()


def test_eight_ports_and_their_throughput(mi300x: HostTree, clock: FakeClock) -> None:
    reader = rdma.RdmaReader(node_sources(HostConfig(root=str(mi300x.root)), wall_time=time.time))
    first = reader.read()
    assert first.throughput == {} and len(first.snapshot.devices) == 8
    clock.advance(10)
    mi300x.update()
    second = reader.read()
    tx, rx = second.throughput[("mlx5_7", 1)]
    assert tx is not None and tx > 0 and rx is not None and rx > 0
    text = _text(rdma.table(second))
    assert "8 RDMA devices" in text and "mlx5_0" in text and "ACTIVE" in text
    assert "read from sysfs" in text and "uverbs3" in text
    document = json.loads(json.dumps(rdma.to_json(second)))
    assert document["source"] == "sysfs" and len(document["devices"]) == 8
    assert len(document["throughput_bytes_per_second"]) == 8


@pytest.mark.slow_timeout
def test_without_sysfs_the_rdma_tool_answers(mi300x: HostTree) -> None:
    import shutil

    shutil.rmtree(mi300x.root / "sys/class/infiniband")
    report = rdma.diagnostic(HostConfig(root=str(mi300x.root))).read()
    assert report.snapshot is not None and report.snapshot.source == "rdma-tool"
    assert "read from rdma-tool" in _text(rdma.table(report))


def test_nothing_found_is_reported(tmp_path) -> None:
    reader = rdma.RdmaReader(node_sources(HostConfig(root=str(tmp_path)), wall_time=time.time))
    reader._collector._fallback = None  # the machine running the tests may have an rdma tool
    report = reader.read()
    assert report.snapshot is None and report.problems == (
        "no RDMA devices under /sys/class/infiniband",
    )
    assert "0 RDMA devices" in _text(rdma.table(report))


def test_a_device_named_like_console_markup_is_shown_as_it_is(
    mi300x: HostTree, clock: FakeClock
) -> None:
    report = rdma.RdmaReader(
        node_sources(HostConfig(root=str(mi300x.root)), wall_time=time.time)
    ).read()
    first = report.snapshot.devices[0]
    odd = dataclasses.replace(first, name="[/]", fw_version="[bold]1.0")
    snapshot = dataclasses.replace(report.snapshot, devices=(odd,))
    text = _text(rdma.table(dataclasses.replace(report, snapshot=snapshot)))
    assert "[/]" in text and "[bold]1.0" in text
