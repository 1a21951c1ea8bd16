"""gpu_minute_pods on every engine as MinuteStore writes it: each pod's sums per node and minute
from its holder rows, the GPU-minutes they held and those GPUs' devices; a minute written again,
in part or whole, summed again whole; the VRAM size the sums took; `rebuild` the same as the
writer."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.reports.storing import minutes, podminutes
from lens.store import database, models
from tests.roles.api.conftest import GIB, gpu, write_gpus

from .conftest import CLUSTER, T0, at, gpu_minute, holder, write

A, B = holder("a"), holder("b")


def _rows() -> dict[tuple[str, datetime.datetime, str], dict[str, object]]:
    table = models.GpuMinutePod
    found = {}
    for row in table.select().dicts():
        assert row.pop("cluster") == CLUSTER
        found[(row.pop("node_name"), row.pop("minute"), row.pop("pod_uid"))] = row
    return found


def _sums(
    held: float,
    utilization: tuple[float, float] = (0.0, 0.0),
    vram: tuple[float, float, int | None] = (0.0, 0.0, None),
    power: tuple[float, float] = (0.0, 0.0),
) -> dict[str, object]:
    """A row's columns: held seconds, then (weighted total, seconds known) of each figure."""
    return {
        "held_seconds": held,
        "utilization_seconds": pytest.approx(utilization[0]),
        "utilization_known_seconds": utilization[1],
        "vram_ratio_seconds": pytest.approx(vram[0]),
        "vram_known_seconds": vram[1],
        "vram_bytes": vram[2],
        "power_joules": pytest.approx(power[0]),
        "power_known_seconds": power[1],
    }


def test_a_pods_gpus_are_summed_per_node_and_minute(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write_gpus(db, "node-1", (gpu(0), gpu(1), gpu(2)))  # 192 GiB each
    write(
        store,
        "node-1",
        [
            gpu_minute(T0, "GPU-0", shares=((A, 60.0, 60.0),), utilization_mean_ratio=0.5,
                       vram_used_mean_bytes=96.0 * GIB, power_mean_watts=400.0),
            gpu_minute(T0, "GPU-1", shares=((A, 30.0, 30.0),), utilization_mean_ratio=0.8,
                       vram_used_mean_bytes=48.0 * GIB),
            # Shared: each holder's share is half, but it held the GPU all minute.
            gpu_minute(T0, "GPU-2", shares=((A, 30.0, 60.0), (B, 30.0, 60.0)),
                       utilization_mean_ratio=0.1),
            gpu_minute(T0 + 60, "GPU-0", shares=((B, 60.0, 60.0),), power_mean_watts=300.0),
        ],
    )  # fmt: skip
    assert _rows() == {
        ("node-1", at(T0), "uid-team-a-a"): _sums(
            150.0,
            utilization=(0.5 * 60 + 0.8 * 30 + 0.1 * 60, 150.0),
            vram=(0.5 * 60 + 0.25 * 30, 90.0, 192 * GIB),
            power=(400.0 * 60, 60.0),
        ),
        ("node-1", at(T0), "uid-team-a-b"): _sums(60.0, utilization=(6.0, 60.0)),
        ("node-1", at(T0 + 60), "uid-team-a-b"): _sums(60.0, power=(300.0 * 60, 60.0)),
    }


def test_a_minute_written_again_is_summed_again_whole(store: minutes.MinuteStore) -> None:
    both = [gpu_minute(T0, g, shares=((A, 60.0, 60.0),)) for g in ("GPU-0", "GPU-1")]
    write(store, "node-1", both)
    write(store, "node-1", both)  # resent: nothing counted twice
    assert _rows() == {("node-1", at(T0), "uid-team-a-a"): _sums(120.0)}
    write(store, "node-1", [gpu_minute(T0, "GPU-0", shares=((B, 60.0, 60.0),))])  # in part
    assert _rows() == {
        ("node-1", at(T0), "uid-team-a-a"): _sums(60.0),
        ("node-1", at(T0), "uid-team-a-b"): _sums(60.0),
    }
    write(store, "node-1", [gpu_minute(T0, "GPU-0"), gpu_minute(T0, "GPU-1")])  # held by none
    assert _rows() == {}


def test_the_vram_size_is_one_known_size_or_none(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    def used(node: str, *uuids: str) -> None:
        write(
            store,
            node,
            [
                gpu_minute(T0, u, shares=((A, 60.0, 60.0),), vram_used_mean_bytes=8.0 * GIB)
                for u in uuids
            ],
        )

    write_gpus(db, "same", (gpu(0), gpu(1)))
    write_gpus(db, "differ", (gpu(0), gpu(1, vram_bytes=64 * GIB)))
    write_gpus(db, "unknown", (gpu(0), gpu(1, vram_bytes=None)))
    used("same", "GPU-0", "GPU-1")
    used("differ", "GPU-0", "GPU-1")
    used("unknown", "GPU-0", "GPU-1")
    used("no-devices", "GPU-0")
    sizes = {node: row["vram_bytes"] for (node, _, _), row in _rows().items()}
    assert sizes == {"same": 192 * GIB, "differ": None, "unknown": None, "no-devices": None}
    # The unknown size leaves its GPU out of the ratio, as a reader joining gpu_devices would.
    unknown = _rows()[("unknown", at(T0), "uid-team-a-a")]
    assert (unknown["vram_ratio_seconds"], unknown["vram_known_seconds"]) == (
        pytest.approx(60.0 * 8 / 192),
        120.0,
    )


def test_nodes_of_one_write_with_different_minutes(store: minutes.MinuteStore) -> None:
    held = (A, 60.0, 60.0)
    prepared = [
        store.prepare("node-1", [gpu_minute(T0, shares=(held,))], ()),
        store.prepare("node-2", [gpu_minute(T0 + 60 * m, shares=(held,)) for m in (0, 1)], ()),
        store.prepare("node-3", [gpu_minute(T0, shares=(held,))], ()),
    ]
    for each in prepared:
        store.before_write(each)
    store.write_many(prepared)
    assert set(_rows()) == {
        ("node-1", at(T0), "uid-team-a-a"),
        ("node-2", at(T0), "uid-team-a-a"),
        ("node-2", at(T0 + 60), "uid-team-a-a"),
        ("node-3", at(T0), "uid-team-a-a"),
    }
    written = [pair for each in prepared for pair in each.summed]
    statements = podminutes.statements(cluster=CLUSTER, written=written)
    changing = [sql.split()[0] for sql, _ in statements if not sql.startswith("SELECT")]
    assert changing == ["DELETE", "INSERT"] * 2, "a DELETE and an INSERT per set of minutes"


def test_rebuild_sums_a_range_as_the_writer_did(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write_gpus(db, "node-1", (gpu(0),))
    write(
        store,
        "node-1",
        [
            gpu_minute(T0 + 60 * m, shares=((A, 40.0, 40.0),), utilization_mean_ratio=0.1 * m,
                       vram_used_mean_bytes=GIB * m, power_mean_watts=100.0 + m)
            for m in range(4)
        ],
    )  # fmt: skip
    written = _rows()
    with database.session(db):
        models.GpuMinutePod.delete().execute()
    first, last = at(T0 + 60), at(T0 + 180)
    assert podminutes.rebuild(db, cluster=CLUSTER, first=first, last=last) == 2
    assert _rows() == {key: row for key, row in written.items() if first <= key[1] < last}
